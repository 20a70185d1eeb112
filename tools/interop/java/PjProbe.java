// parquet-java Bloom filter probes for tools/interop/interop.py, called through py4j inside the Spark
// driver JVM (same parquet-java 1.17.0 jars Spark uses). Same logic as tools/gen/java/PjOracle.java:
// ParquetFileReader.getBloomFilterDataReader(block).readBloomFilter(chunk), then
// BloomFilter.findHash(BloomFilter.hash(typed value)) with the value decoded by physical type.
//
//   PjProbe.probe(file, "COLUMN\tROW_GROUP\tPLAIN_HEX\n...") -> "1 0 null ..." (one per line)
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.values.bloomfilter.BloomFilter;
import org.apache.parquet.hadoop.BloomFilterReader;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.api.Binary;

public class PjProbe {
  public static String probe(String file, String tsv) throws Exception {
    Configuration conf = new Configuration();
    StringBuilder out = new StringBuilder();
    try (ParquetFileReader reader =
        ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file), conf))) {
      List<BlockMetaData> blocks = reader.getFooter().getBlocks();
      List<Map<String, BloomFilter>> filters = new ArrayList<>();
      List<Map<String, ColumnChunkMetaData>> chunks = new ArrayList<>();
      for (BlockMetaData block : blocks) {
        BloomFilterReader bfr = reader.getBloomFilterDataReader(block);
        Map<String, BloomFilter> fm = new HashMap<>();
        Map<String, ColumnChunkMetaData> cm = new HashMap<>();
        for (ColumnChunkMetaData c : block.getColumns()) {
          String path = c.getPath().toDotString();
          cm.put(path, c);
          fm.put(path, bfr.readBloomFilter(c));
        }
        filters.add(fm);
        chunks.add(cm);
      }
      for (String line : tsv.split("\n")) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        int rg = Integer.parseInt(f[1]);
        ColumnChunkMetaData c = chunks.get(rg).get(f[0]);
        if (c == null) throw new IllegalArgumentException("no column " + f[0]);
        BloomFilter bf = filters.get(rg).get(f[0]);
        if (bf == null) { out.append("null\n"); continue; }
        byte[] b = unhex(f[2]);
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        long h;
        switch (c.getPrimitiveType().getPrimitiveTypeName()) {
          case INT32: h = bf.hash(bb.getInt()); break;
          case INT64: h = bf.hash(bb.getLong()); break;
          case FLOAT: h = bf.hash(bb.getFloat()); break;
          case DOUBLE: h = bf.hash(bb.getDouble()); break;
          default: h = bf.hash(Binary.fromConstantByteArray(b)); break;
        }
        out.append(bf.findHash(h) ? "1\n" : "0\n");
      }
    }
    return out.toString();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }
}
