// parquet-java oracle for tools/gen: answers Bloom filter probes with parquet-java's own
// reader (ParquetFileReader.getBloomFilterDataReader(..).readBloomFilter(..) and
// BloomFilter.findHash(BloomFilter.hash(typed value))).
//
// usage: java -cp "$PYSPARK/jars/*:build" PjOracle FILE < probes.tsv
//   input lines:  COLUMN \t ROW_GROUP \t PLAIN_HEX
//   output lines: 1 (maybe), 0 (definitely absent), null (no filter in that chunk)
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
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

public class PjOracle {
  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    try (ParquetFileReader reader =
        ParquetFileReader.open(HadoopInputFile.fromPath(new Path(args[0]), conf))) {
      List<BlockMetaData> blocks = reader.getFooter().getBlocks();
      // filters.get(rg).get(path) ; value null = no filter
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
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        String[] f = line.split("\t", -1);
        int rg = Integer.parseInt(f[1]);
        ColumnChunkMetaData c = chunks.get(rg).get(f[0]);
        if (c == null) throw new IllegalArgumentException("no column " + f[0]);
        BloomFilter bf = filters.get(rg).get(f[0]);
        if (bf == null) { out.println("null"); continue; }
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
        out.println(bf.findHash(h) ? "1" : "0");
      }
      out.flush();
    }
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }
}
