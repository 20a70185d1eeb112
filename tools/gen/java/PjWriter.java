// parquet-java direct writer for tools/gen (no Spark): the types Spark cannot produce.
//
// usage: java -cp "$PYSPARK/jars/*:build" PjWriter OUT.parquet
//
// Columns (all optional with ~10% nulls unless noted; Bloom filters on every non-boolean leaf,
// dictionary encoding off so that parquet-java writes them):
//   u8/u16/u32/u64  INT32/INT64 INT(n,false)   unsigned, incl. values >= 2^(n-1)
//   dec_bin         BYTE_ARRAY DECIMAL(20,2)   minimal big-endian two's complement
//   time_ns_utc     INT64 TIME(NANOS,true);   time_ms_utc INT32 TIME(MILLIS,true)
//   ts_ns           INT64 TIMESTAMP(NANOS,false)
//   uuid            FLBA(16) UUID;  f16 FLBA(2) FLOAT16;  fixed3 FLBA(3) no annotation
//   int96           INT96 (nanos of day LE i64 + Julian day LE i32)
//   enum            BYTE_ARRAY ENUM
//   req_i32         REQUIRED INT32 (no nulls)
//   flag            BOOLEAN: parquet-java writes a (32-byte) filter for it although the spec defines none
// Deterministic: java.util.Random with a fixed seed; a global value pool plus one pool per
// block of 300 rows (row groups are size-based).
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.*;
import java.util.function.Function;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

public class PjWriter {
  static final int ROWS = 1200, BLOCK = 300;
  static final Random RNG = new Random(20240131L);

  /** Pools: values for row i come from the global pool or from the pool of block i / BLOCK. */
  static <T> List<T> column(Function<Random, T> gen, List<T> edges) {
    List<T> glob = new ArrayList<>();
    for (int i = 0; i < 60; i++) glob.add(gen.apply(RNG));
    List<T> out = new ArrayList<>();
    List<T> local = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      if (i % BLOCK == 0) {
        local.clear();
        for (int j = 0; j < 90; j++) local.add(gen.apply(RNG));
      }
      double k = RNG.nextDouble();
      out.add(k < 0.1 ? null : k < 0.5 ? glob.get(RNG.nextInt(glob.size())) : local.get(RNG.nextInt(local.size())));
    }
    for (T e : edges) out.set(RNG.nextInt(ROWS), e);
    return out;
  }

  static byte[] bytes(Random r, int n) {
    byte[] b = new byte[n];
    r.nextBytes(b);
    return b;
  }

  static long unsigned(Random r, int bits) {
    if (r.nextDouble() < 0.3) return r.nextInt(bits == 8 ? 256 : 600);
    return bits == 64 ? r.nextLong() : (r.nextLong() >>> (64 - bits));
  }

  public static void main(String[] args) throws Exception {
    MessageType schema = Types.buildMessage()
        .optional(PrimitiveTypeName.INT32).as(LogicalTypeAnnotation.intType(8, false)).named("u8")
        .optional(PrimitiveTypeName.INT32).as(LogicalTypeAnnotation.intType(16, false)).named("u16")
        .optional(PrimitiveTypeName.INT32).as(LogicalTypeAnnotation.intType(32, false)).named("u32")
        .optional(PrimitiveTypeName.INT64).as(LogicalTypeAnnotation.intType(64, false)).named("u64")
        .optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.decimalType(2, 20)).named("dec_bin")
        .optional(PrimitiveTypeName.INT64).as(LogicalTypeAnnotation.timeType(true, TimeUnit.NANOS)).named("time_ns_utc")
        .optional(PrimitiveTypeName.INT32).as(LogicalTypeAnnotation.timeType(true, TimeUnit.MILLIS)).named("time_ms_utc")
        .optional(PrimitiveTypeName.INT64).as(LogicalTypeAnnotation.timestampType(false, TimeUnit.NANOS)).named("ts_ns")
        .optional(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY).length(16).as(LogicalTypeAnnotation.uuidType()).named("uuid")
        .optional(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY).length(2).as(LogicalTypeAnnotation.float16Type()).named("f16")
        .optional(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY).length(3).named("fixed3")
        .optional(PrimitiveTypeName.INT96).named("int96")
        .optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.enumType()).named("enum")
        .required(PrimitiveTypeName.INT32).named("req_i32")
        .optional(PrimitiveTypeName.BOOLEAN).named("flag")
        .named("pj");

    List<Long> u8 = column(r -> unsigned(r, 8), List.of(0L, 255L, 128L));
    List<Long> u16 = column(r -> unsigned(r, 16), List.of(0L, 65535L, 32768L));
    List<Long> u32 = column(r -> unsigned(r, 32), List.of(0L, 4294967295L, 2147483648L));
    List<Long> u64 = column(r -> unsigned(r, 64), List.of(0L, -1L, Long.MIN_VALUE));
    List<BigInteger> decBin = column(r -> r.nextDouble() < 0.3 ? BigInteger.valueOf(r.nextInt(20001) - 10000)
        : new BigInteger(66, r).subtract(BigInteger.ONE.shiftLeft(65)),
        List.of(BigInteger.ZERO, BigInteger.valueOf(-1), BigInteger.valueOf(127), BigInteger.valueOf(128),
                BigInteger.TEN.pow(20).subtract(BigInteger.ONE)));
    List<Long> timeNs = column(r -> Math.floorMod(r.nextLong(), 86_400_000_000_000L), List.of(0L, 86_399_999_999_999L));
    List<Integer> timeMs = column(r -> r.nextInt(86_400_000), List.of(0, 86_399_999));
    List<Long> tsNs = column(r -> r.nextLong() / 3, List.of(0L, -1L, Long.MAX_VALUE / 3));
    List<byte[]> uuid = column(r -> bytes(r, 16), List.of(new byte[16]));
    List<Short> f16 = column(r -> (short) (r.nextInt(0x7c00) | (r.nextBoolean() ? 0x8000 : 0)),
        List.of((short) 0x0000, (short) 0x8000, (short) 0x7c00, (short) 0xfc00, (short) 0x7e00, (short) 0x0001, (short) 0x3c00));
    List<byte[]> fixed3 = column(r -> bytes(r, 3), List.of(new byte[3]));
    List<long[]> int96 = column(r -> new long[] {Math.floorMod(r.nextLong(), 86_400_000_000_000L), 2440588 + r.nextInt(40000) - 15000},
        List.of(new long[] {0, 2440588}));
    String[] enumVals = {"RED", "GREEN", "BLUE", "ÜBER", "", "日本"};
    List<String> enm = column(r -> enumVals[r.nextInt(enumVals.length)] + (r.nextInt(4) == 0 ? "" : String.valueOf(r.nextInt(50))), List.of(""));
    List<Integer> req = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) req.add(i % BLOCK < 250 ? RNG.nextInt(1000) : RNG.nextInt());

    String out = args[0];
    Files.deleteIfExists(Paths.get(out));
    ExampleParquetWriter.Builder b = ExampleParquetWriter.builder(new LocalOutputFile(Paths.get(out)))
        .withType(schema)
        .withDictionaryEncoding(false)
        .withRowGroupSize(20 * 1024L)
        .withCompressionCodec(CompressionCodecName.SNAPPY)
        .withPageSize(4096)
        .withPageRowCountLimit(1000);
    for (String c : List.of("u8", "u16", "u32", "u64", "dec_bin", "time_ns_utc", "time_ms_utc", "ts_ns", "uuid", "f16", "fixed3", "int96", "enum", "req_i32")) {
      b = b.withBloomFilterEnabled(c, true).withBloomFilterNDV(c, 200L).withBloomFilterFPP(c, 0.05);
    }
    // parquet-java also writes a filter for a BOOLEAN column when asked (the spec defines none):
    // keep a tiny one so readers can be tested on it (hashes of Java booleans; never probed).
    b = b.withBloomFilterEnabled("flag", true).withBloomFilterNDV("flag", 2L);
    SimpleGroupFactory f = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = b.build()) {
      for (int i = 0; i < ROWS; i++) {
        Group g = f.newGroup();
        if (u8.get(i) != null) g.add("u8", (int) (long) u8.get(i));
        if (u16.get(i) != null) g.add("u16", (int) (long) u16.get(i));
        if (u32.get(i) != null) g.add("u32", (int) (long) u32.get(i));
        if (u64.get(i) != null) g.add("u64", (long) u64.get(i));
        if (decBin.get(i) != null) g.add("dec_bin", Binary.fromConstantByteArray(decBin.get(i).toByteArray()));
        if (timeNs.get(i) != null) g.add("time_ns_utc", (long) timeNs.get(i));
        if (timeMs.get(i) != null) g.add("time_ms_utc", (int) timeMs.get(i));
        if (tsNs.get(i) != null) g.add("ts_ns", (long) tsNs.get(i));
        if (uuid.get(i) != null) g.add("uuid", Binary.fromConstantByteArray(uuid.get(i)));
        if (f16.get(i) != null) {
          short h = f16.get(i);
          g.add("f16", Binary.fromConstantByteArray(new byte[] {(byte) h, (byte) (h >> 8)}));
        }
        if (fixed3.get(i) != null) g.add("fixed3", Binary.fromConstantByteArray(fixed3.get(i)));
        if (int96.get(i) != null) {
          ByteBuffer bb = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
          bb.putLong(int96.get(i)[0]).putInt((int) int96.get(i)[1]);
          g.add("int96", Binary.fromConstantByteArray(bb.array()));
        }
        if (enm.get(i) != null) g.add("enum", enm.get(i));
        g.add("req_i32", (int) req.get(i));
        if (i % 7 != 0) g.add("flag", i % 3 == 0);
        w.write(g);
      }
    }
  }
}
