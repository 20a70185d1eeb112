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
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl PlainValue for $t {
            #[inline(always)]
            fn plain_hash(&self) -> u64 {
                crate::hash(&self.to_le_bytes())
            }
        }
    )*};
}
numbers!(i32, u32, i64, u64, f32, f64);

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
        }
    )*};
}
small_ints!(i8 => i32, i16 => i32, u8 => u32, u16 => u32);

impl<const N: usize> PlainValue for [u8; N] {
    #[inline(always)]
    fn plain_hash(&self) -> u64 {
        crate::hash(self)
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
}
