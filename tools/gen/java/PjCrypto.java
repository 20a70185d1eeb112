// parquet-java with modular encryption, for testdata/encrypted: writes encrypted files with
// Bloom filters, and answers probes of encrypted filters with parquet-java's own decrypting reader.
//
// usage: java -cp "$PYSPARK/jars/*:build" PjCrypto write OUT.parquet (footer|plain) (gcm|ctr) [nobloom]
//        java -cp "$PYSPARK/jars/*:build" PjCrypto answers FILE FOOTER_KEY [COLUMN=KEY ...] > OUT.tsv
//        java -cp "$PYSPARK/jars/*:build" PjCrypto counts FILE FOOTER_KEY [COLUMN=KEY ...] > OUT.counts.tsv
//
// Keys are ASCII text (as in parquet-testing): footer 0123456789012345, `secret`
// 1234567890123450, `name` 1234567890123451; `f` is encrypted with the footer key; `id` is not
// encrypted.
//
// write: 2000 rows, row groups of 500 rows (withRowGroupRowCountLimit), no dictionary (so every
// chunk gets a filter), Bloom filters on every column with small NDVs (small files); with
// `nobloom`, a filter on `id` only (the others are left for `sbbf add` to build).
//
// counts: decrypts the file and, per row group and leaf column, the number of non-null values
// and of distinct PLAIN encodings, read back by parquet-java's record reader:
//   COLUMN \t ROW_GROUP \t VALUES \t DISTINCT
//
// answers: decrypts the file with parquet-java (FileDecryptionProperties with explicit keys),
// reads every row group's values of every flat primitive column, and for each chunk with a
// filter probes (a) every distinct stored value (at most 200), (b) up to 100 values stored only
// in other row groups, (c) 100 values stored nowhere; output lines:
//   COLUMN \t ROW_GROUP \t PLAIN_HEX \t present(0/1) \t answer(1 maybe, 0 absent)
// with PLAIN_HEX the value's PLAIN encoding (the bytes the filter hashes).
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.values.bloomfilter.BloomFilter;
import org.apache.parquet.crypto.ColumnDecryptionProperties;
import org.apache.parquet.crypto.ColumnEncryptionProperties;
import org.apache.parquet.crypto.FileDecryptionProperties;
import org.apache.parquet.crypto.FileEncryptionProperties;
import org.apache.parquet.crypto.ParquetCipher;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.BloomFilterReader;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

public class PjCrypto {
  static final byte[] FOOTER_KEY = "0123456789012345".getBytes(StandardCharsets.US_ASCII);
  static final byte[] SECRET_KEY = "1234567890123450".getBytes(StandardCharsets.US_ASCII);
  static final byte[] NAME_KEY = "1234567890123451".getBytes(StandardCharsets.US_ASCII);
  static final int ROWS = 2000, RG_ROWS = 500;

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "write":
        write(args[1], args[2].equals("plain"), args[3].equals("ctr"),
            args.length > 4 && args[4].equals("nobloom"));
        break;
      case "answers": answers(args); break;
      case "counts": counts(args); break;
      default: throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  static void write(String out, boolean plaintextFooter, boolean ctr, boolean noBloom) throws Exception {
    MessageType schema = Types.buildMessage()
        .required(PrimitiveTypeName.INT64).named("id")
        .required(PrimitiveTypeName.INT64).named("secret")
        .optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("name")
        .required(PrimitiveTypeName.DOUBLE).named("f")
        .named("crypto");
    Map<ColumnPath, ColumnEncryptionProperties> cols = new HashMap<>();
    cols.put(ColumnPath.get("secret"),
        ColumnEncryptionProperties.builder("secret").withKey(SECRET_KEY).withKeyID("ks").build());
    cols.put(ColumnPath.get("name"),
        ColumnEncryptionProperties.builder("name").withKey(NAME_KEY).withKeyID("kn").build());
    // No key: encrypted with the footer key (ColumnCryptoMetaData ENCRYPTION_WITH_FOOTER_KEY).
    cols.put(ColumnPath.get("f"), ColumnEncryptionProperties.builder("f").build());
    FileEncryptionProperties.Builder fb = FileEncryptionProperties.builder(FOOTER_KEY)
        .withFooterKeyID("kf")
        .withAlgorithm(ctr ? ParquetCipher.AES_GCM_CTR_V1 : ParquetCipher.AES_GCM_V1)
        .withEncryptedColumns(cols);
    if (plaintextFooter) fb.withPlaintextFooter();
    java.nio.file.Files.deleteIfExists(java.nio.file.Paths.get(out));
    Random rng = new Random(ctr ? 14L : 41L);
    SimpleGroupFactory f = new SimpleGroupFactory(schema);
    ExampleParquetWriter.Builder builder = ExampleParquetWriter.builder(new LocalOutputFile(java.nio.file.Paths.get(out)))
        .withType(schema)
        .withEncryption(fb.build())
        .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
        .withDictionaryEncoding(false)
        .withRowGroupRowCountLimit(RG_ROWS)
        .withBloomFilterEnabled(!noBloom)
        .withBloomFilterEnabled("id", true)
        .withBloomFilterNDV("id", 500);
    // An NDV turns a column's filter on: only set where filters are wanted.
    if (!noBloom)
      builder = builder.withBloomFilterNDV("secret", 500).withBloomFilterNDV("name", 500).withBloomFilterNDV("f", 500);
    try (ParquetWriter<Group> w = builder.build()) {
      for (int i = 0; i < ROWS; i++) {
        Group g = f.newGroup();
        g.add("id", (long) i);
        g.add("secret", rng.nextLong() >> rng.nextInt(60));
        if (rng.nextInt(10) != 0) g.add("name", "name-" + rng.nextInt(5000));
        g.add("f", Math.round(rng.nextGaussian() * 1e4) / 100.0);
        w.write(g);
      }
    }
  }

  /** The reader options that decrypt with the keys of args[2..]: footer key, then COLUMN=KEY. */
  static ParquetReadOptions decrypting(Configuration conf, String[] args) {
    Map<ColumnPath, ColumnDecryptionProperties> keys = new HashMap<>();
    for (int i = 3; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      keys.put(ColumnPath.fromDotString(kv[0]),
          ColumnDecryptionProperties.builder(kv[0]).withKey(kv[1].getBytes(StandardCharsets.US_ASCII)).build());
    }
    FileDecryptionProperties fdp = FileDecryptionProperties.builder()
        .withFooterKey(args[2].getBytes(StandardCharsets.US_ASCII))
        .withColumnKeys(keys)
        .build();
    return HadoopReadOptions.builder(conf).withDecryption(fdp).build();
  }

  static void counts(String[] args) throws Exception {
    Configuration conf = new Configuration();
    ParquetReadOptions opts = decrypting(conf, args);
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(args[1]), conf), opts)) {
      MessageType schema = reader.getFooter().getFileMetaData().getSchema();
      List<ColumnDescriptor> leaves = schema.getColumns();
      int blocks = reader.getFooter().getBlocks().size();
      for (int rg = 0; rg < blocks; rg++) {
        PageReadStore pages = reader.readNextRowGroup();
        MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
        RecordReader<Group> rr = io.getRecordReader(pages, new GroupRecordConverter(schema));
        long[] values = new long[leaves.size()];
        List<Set<String>> distinct = new ArrayList<>();
        for (int c = 0; c < leaves.size(); c++) distinct.add(new HashSet<>());
        for (long r = 0; r < pages.getRowCount(); r++) {
          Group g = rr.read();
          for (int c = 0; c < leaves.size(); c++) {
            String name = leaves.get(c).getPath()[0];
            int n = g.getFieldRepetitionCount(name);
            for (int k = 0; k < n; k++) {
              values[c]++;
              distinct.get(c).add(plain(leaves.get(c).getPrimitiveType(), g, name, k));
            }
          }
        }
        for (int c = 0; c < leaves.size(); c++)
          out.println(String.join(".", leaves.get(c).getPath()) + "\t" + rg + "\t" + values[c] + "\t" + distinct.get(c).size());
      }
    }
    out.flush();
  }

  static void answers(String[] args) throws Exception {
    Configuration conf = new Configuration();
    ParquetReadOptions opts = decrypting(conf, args);
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(args[1]), conf), opts)) {
      MessageType schema = reader.getFooter().getFileMetaData().getSchema();
      List<ColumnDescriptor> leaves = schema.getColumns();
      List<BlockMetaData> blocks = reader.getFooter().getBlocks();
      // values.get(rg).get(leaf): distinct PLAIN encodings (hex), in first-seen order
      List<List<LinkedHashSet<String>>> values = new ArrayList<>();
      for (int rg = 0; rg < blocks.size(); rg++) {
        PageReadStore pages = reader.readNextRowGroup();
        MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
        RecordReader<Group> rr = io.getRecordReader(pages, new GroupRecordConverter(schema));
        List<LinkedHashSet<String>> per = new ArrayList<>();
        for (int c = 0; c < leaves.size(); c++) per.add(new LinkedHashSet<>());
        for (long r = 0; r < pages.getRowCount(); r++) {
          Group g = rr.read();
          for (int c = 0; c < leaves.size(); c++) {
            String name = leaves.get(c).getPath()[0];
            if (g.getFieldRepetitionCount(name) == 0) continue;
            per.get(c).add(plain(leaves.get(c).getPrimitiveType(), g, name, 0));
          }
        }
        values.add(per);
      }
      Random rng = new Random(7L);
      for (int rg = 0; rg < blocks.size(); rg++) {
        BloomFilterReader bfr = reader.getBloomFilterDataReader(blocks.get(rg));
        for (int c = 0; c < leaves.size(); c++) {
          ColumnDescriptor d = leaves.get(c);
          String path = String.join(".", d.getPath());
          ColumnChunkMetaData chunk = null;
          for (ColumnChunkMetaData m : blocks.get(rg).getColumns())
            if (m.getPath().toDotString().equals(path)) chunk = m;
          BloomFilter bf = bfr.readBloomFilter(chunk);
          if (bf == null) continue;
          Set<String> here = values.get(rg).get(c);
          List<String> probes = new ArrayList<>();
          for (String v : here) { if (probes.size() >= 200) break; probes.add(v); }
          int others = 0;
          for (int o = 0; o < blocks.size() && others < 100; o++) {
            if (o == rg) continue;
            for (String v : values.get(o).get(c)) {
              if (others >= 100) break;
              if (!here.contains(v)) { probes.add(v); others++; }
            }
          }
          Set<String> everywhere = new HashSet<>();
          for (List<LinkedHashSet<String>> per : values) everywhere.addAll(per.get(c));
          int nowhere = 0;
          while (nowhere < 100) {
            String v = random(d.getPrimitiveType(), rng);
            if (everywhere.contains(v)) continue;
            probes.add(v);
            nowhere++;
          }
          for (String v : probes) {
            boolean maybe = bf.findHash(hash(bf, d.getPrimitiveType(), unhex(v)));
            out.println(path + "\t" + rg + "\t" + v + "\t" + (here.contains(v) ? 1 : 0) + "\t" + (maybe ? 1 : 0));
          }
        }
      }
    }
    out.flush();
  }

  static String plain(PrimitiveType t, Group g, String name, int k) {
    ByteBuffer b;
    switch (t.getPrimitiveTypeName()) {
      case INT32: b = le(4).putInt(g.getInteger(name, k)); break;
      case INT64: b = le(8).putLong(g.getLong(name, k)); break;
      case FLOAT: b = le(4).putFloat(g.getFloat(name, k)); break;
      case DOUBLE: b = le(8).putDouble(g.getDouble(name, k)); break;
      case BOOLEAN: return g.getBoolean(name, k) ? "01" : "00";
      case INT96: return hex(g.getInt96(name, k).getBytes());
      default: return hex(g.getBinary(name, k).getBytes());
    }
    return hex(b.array());
  }

  static String random(PrimitiveType t, Random rng) {
    switch (t.getPrimitiveTypeName()) {
      case INT32: return hex(le(4).putInt(rng.nextInt()).array());
      case INT64: return hex(le(8).putLong(rng.nextLong() >> rng.nextInt(60)).array());
      case FLOAT: return hex(le(4).putFloat((float) (rng.nextGaussian() * 100)).array());
      case DOUBLE: return hex(le(8).putDouble(Math.round(rng.nextGaussian() * 1e4) / 100.0).array());
      case FIXED_LEN_BYTE_ARRAY: {
        byte[] b = new byte[t.getTypeLength()];
        rng.nextBytes(b);
        return hex(b);
      }
      default: return hex(("name-" + (5000 + rng.nextInt(5000))).getBytes(StandardCharsets.UTF_8));
    }
  }

  static long hash(BloomFilter bf, PrimitiveType t, byte[] b) {
    ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    switch (t.getPrimitiveTypeName()) {
      case INT32: return bf.hash(bb.getInt());
      case INT64: return bf.hash(bb.getLong());
      case FLOAT: return bf.hash(bb.getFloat());
      case DOUBLE: return bf.hash(bb.getDouble());
      default: return bf.hash(Binary.fromConstantByteArray(b));
    }
  }

  static ByteBuffer le(int n) { return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN); }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }
}
