//! [`PlainValue`]: values in the form Parquet writers hash them, for the batch APIs.

/// A value a filter can hash the way Parquet writers do: XXH64 (seed 0) of its PLAIN encoding.
///
/// Numbers hash as their little-endian bytes (an `i32` is an INT32 value, an `f64` a DOUBLE,
/// bit for bit, so `-0.0` and `0.0` differ: mapping SQL semantics onto stored bits is the
/// caller's business). 8- and 16-bit integers hash as the INT32 Parquet stores them as
/// (sign-extended if signed, zero-extended if not), so an Arrow `Int16Array`'s values probe a
/// column of logical type INT(16, true) directly. Byte strings and `str` hash as their bytes, without the length prefix
/// PLAIN puts before a BYTE_ARRAY. Fixed-size arrays (`[u8; N]`) are FIXED_LEN_BYTE_ARRAY values.
///
/// The batch methods ([`crate::Sbbf::contains_values`], [`crate::Sbbf::insert_values`]) are
/// generic over this trait so that the hash of a fixed-width value is compiled for its width.
///
/// ```
/// use sbbf::PlainValue;
/// assert_eq!(42i64.plain_hash(), sbbf::hash(&42i64.to_le_bytes()));
/// assert_eq!("parquet".plain_hash(), sbbf::hash(b"parquet"));
/// assert_eq!([7u8; 16].plain_hash(), sbbf::hash(&[7u8; 16]));
/// assert_eq!((-2i16).plain_hash(), (-2i32).plain_hash());
/// ```
pub trait PlainValue {
    /// XXH64 (seed 0) of the value's PLAIN bytes.
    fn plain_hash(&self) -> u64;

    /// For values of 4, 8 or 16 bytes whatever their content (INT32, INT64, DOUBLE,
    /// FIXED_LEN_BYTE_ARRAY(16), ...): their PLAIN bytes as little-endian words, so that batch
    /// kernels can hash several at once; [`Words::Other`] for every other value. Whatever it
    /// returns, the hash is [`PlainValue::plain_hash`].
    #[doc(hidden)]
    #[inline(always)]
    fn plain_words(&self) -> Words {
        Words::Other
    }
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl PlainValue for $t {
            #[inline(always)]
            fn plain_hash(&self) -> u64 {
                crate::hash(&self.to_le_bytes())
            }
            #[inline(always)]
            fn plain_words(&self) -> Words {
                Words::of(&self.to_le_bytes())
            }
        }
    )*};
}
numbers!(i32, u32, f32, i64, u64, f64);

/// Parquet stores 8- and 16-bit integers (INT(8|16, signed|unsigned)) as INT32, so writers hash
/// the four bytes of the widened value: sign-extended for signed types, zero-extended for
/// unsigned ones.
macro_rules! small_ints {
    ($($t:ty => $wide:ty),*) => {$(
        impl PlainValue for $t {
            #[inline(always)]
            fn plain_hash(&self) -> u64 {
                crate::hash(&(*self as $wide).to_le_bytes())
            }
            #[inline(always)]
            fn plain_words(&self) -> Words {
                Words::W4(*self as $wide as u32)
            }
        }
    )*};
}
small_ints!(i8 => i32, i16 => i32, u8 => u32, u16 => u32);

impl<const N: usize> PlainValue for [u8; N] {
    #[inline(always)]
    fn plain_hash(&self) -> u64 {
        crate::hash(self)
    }
    #[inline(always)]
    fn plain_words(&self) -> Words {
        Words::of(self)
    }
}

macro_rules! byte_strings {
    ($($t:ty),*) => {$(
        impl PlainValue for $t {
            #[inline(always)]
            fn plain_hash(&self) -> u64 {
                crate::hash(<$t as AsRef<[u8]>>::as_ref(self))
            }
        }
    )*};
}
byte_strings!([u8], str, Vec<u8>, String);

impl<T: PlainValue + ?Sized> PlainValue for &T {
    #[inline(always)]
    fn plain_hash(&self) -> u64 {
        (**self).plain_hash()
    }
    #[inline(always)]
    fn plain_words(&self) -> Words {
        (**self).plain_words()
    }
}

/// The PLAIN bytes of a fixed-width value as little-endian words (see
/// [`PlainValue::plain_words`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words {
    /// Four bytes.
    W4(u32),
    /// Eight bytes.
    W8(u64),
    /// Sixteen bytes: the first eight, then the last eight.
    W16(u64, u64),
    /// Any other length.
    Other,
}

impl Words {
    /// The words of `bytes` when it is 4, 8 or 16 bytes long. Inlined with a fixed-size input,
    /// the length test folds away.
    #[inline(always)]
    pub(crate) fn of(bytes: &[u8]) -> Words {
        if let Ok(b) = <[u8; 4]>::try_from(bytes) {
            Words::W4(u32::from_le_bytes(b))
        } else if let Ok(b) = <[u8; 8]>::try_from(bytes) {
            Words::W8(u64::from_le_bytes(b))
        } else if let Ok(b) = <[u8; 16]>::try_from(bytes) {
            let (lo, hi) = b.split_at(8);
            Words::W16(
                u64::from_le_bytes(lo.try_into().expect("8 bytes")),
                u64::from_le_bytes(hi.try_into().expect("8 bytes")),
            )
        } else {
            Words::Other
        }
    }
}
