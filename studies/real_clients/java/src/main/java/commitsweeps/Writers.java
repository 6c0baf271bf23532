package commitsweeps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.avro.Avro;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types;

/** The writers: each appends a one-row data file every interval, from its phase, by a FastAppend. */
final class Writers {
  private Writers() {}

  // The columns the Python writers' batches have (studies/real_clients/real_clients.py, SCHEMA_FIELDS).
  static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "writer", Types.LongType.get()),
      Types.NestedField.required(2, "seq", Types.LongType.get()));

  static void create(Args args) {
    Catalog catalog = Catalogs.open(args);
    Namespace namespace = Namespace.of(args.get("namespace"));
    SupportsNamespaces namespaces = (SupportsNamespaces) catalog;
    if (!namespaces.namespaceExists(namespace)) {
      namespaces.createNamespace(namespace);
    }
    for (String table : args.get("tables").split(",")) {
      catalog.createTable(TableIdentifier.of(namespace, table), SCHEMA, PartitionSpec.unpartitioned());
      System.out.println("{\"kind\":\"created\",\"table\":\"" + table + "\"}");
    }
  }

  static void snapshots(Args args) {
    Catalog catalog = Catalogs.open(args);
    for (String table : args.get("tables").split(",")) {
      Table loaded = catalog.loadTable(TableIdentifier.of(args.get("namespace"), table));
      int count = 0;
      for (var ignored : loaded.snapshots()) {
        count++;
      }
      System.out.println("{\"table\":\"" + table + "\",\"snapshots\":" + count + "}");
    }
  }

  /** A data file of one row naming its writer and sequence number, in the table's location (Avro: no Hadoop). */
  static DataFile oneRowFile(Table table, long writer, long seq) throws Exception {
    String name = FileFormat.AVRO.addExtension(UUID.randomUUID().toString());
    OutputFile out = table.io().newOutputFile(table.locationProvider().newDataLocation(name));
    DataWriter<Record> writer1 = Avro.writeData(out).schema(table.schema()).withSpec(table.spec())
        .createWriterFunc(org.apache.iceberg.data.avro.DataWriter::create).overwrite().build();
    Record row = GenericRecord.create(table.schema());
    row.setField("writer", writer);
    row.setField("seq", seq);
    try (writer1) {
      writer1.write(row);
    }
    return writer1.toDataFile();
  }

  /** One stateless call: load the table, write its data file, commit a FastAppend; the commit's attempts. */
  static long append(Catalog catalog, TableIdentifier id, long writer, long seq) throws Exception {
    Table table = catalog.loadTable(id);
    DataFile file = oneRowFile(table, writer, seq);
    AttemptsReporter.take();  // nothing left over from an earlier call
    table.newFastAppend().appendFile(file).commit();
    return AttemptsReporter.take();
  }

  static void write(Args args) throws Exception {
    Catalog catalog = Catalogs.open(args);
    Namespace namespace = Namespace.of(args.get("namespace"));
    List<Double> ids = args.numbers("writers");
    List<String> tables = Arrays.asList(args.get("writer-tables").split(","));
    List<Double> phases = args.numbers("phases-s");
    if (tables.size() != ids.size() || phases.size() != ids.size()) {
      throw new Args.UsageError("--writer-tables and --phases-s must name one value per --writers entry");
    }
    double intervalS = args.number("interval-s");
    double durationS = args.number("duration-s");
    warmUp(catalog, namespace);
    System.out.println("{\"kind\":\"ready\"}");
    System.out.flush();
    String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    if (line == null) {
      return;  // the driver went away before the start
    }
    Clock clock = new Clock(Double.parseDouble(line.trim()));
    long cpu0 = processCpuNanos();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      long writer = Math.round(ids.get(i));
      TableIdentifier id = TableIdentifier.of(namespace, tables.get(i));
      double phase = phases.get(i);
      Thread thread = new Thread(() -> loop(catalog, id, writer, phase, intervalS, durationS, clock),
          "writer-" + writer);
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    double cpuS = (processCpuNanos() - cpu0) / 1e9;
    System.out.println("{\"kind\":\"cpu\",\"cpu_s\":" + cpuS + "}");
    System.out.flush();
  }

  private static void loop(Catalog catalog, TableIdentifier id, long writer, double phaseS, double intervalS,
                           double durationS, Clock clock) {
    for (long seq = 0; ; seq++) {
      double due = phaseS + seq * intervalS;
      if (due >= durationS) {
        return;
      }
      clock.sleepUntil(due);
      double start = clock.nowS();
      long attempts = -1;
      String error = "";
      try {
        attempts = append(catalog, id, writer, seq);
      } catch (Exception e) {  // a commit that raises counts as failed, whatever the reason
        error = e.getClass().getSimpleName();
      }
      double end = clock.nowS();
      String json = String.format(java.util.Locale.ROOT,
          "{\"writer\":%d,\"seq\":%d,\"table\":\"%s\",\"due_s\":%.6f,\"start_s\":%.6f,\"end_s\":%.6f,"
              + "\"ok\":%s,\"attempts\":%d,\"error\":\"%s\"}",
          writer, seq, id.name(), due, start, end, error.isEmpty(), attempts, error);
      synchronized (System.out) {
        System.out.println(json);
        System.out.flush();
      }
    }
  }

  /**
   * One commit on a scratch table before the start, so that the first timed call does not load and compile the
   * write path's classes (hundreds of ms); the scratch table is dropped again.
   */
  private static void warmUp(Catalog catalog, Namespace namespace) throws Exception {
    TableIdentifier scratch = TableIdentifier.of(namespace, "warmup_" + UUID.randomUUID().toString().substring(0, 8));
    try {
      catalog.createTable(scratch, SCHEMA, PartitionSpec.unpartitioned());
      try {
        append(catalog, scratch, -1, -1);
      } finally {
        catalog.dropTable(scratch, false);
      }
    } catch (RuntimeException e) {  // e.g. SQLite busy with another JVM's warm-up: the timed calls go on cold
      System.err.println("iceberg-writers: warm-up commit failed (" + e.getClass().getSimpleName() + "); going on");
    }
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Seconds from the common start (epoch ms, as the Python driver's time.time() counts). */
  static final class Clock {
    private final double startEpochMs;
    private final double anchorEpochMs = System.currentTimeMillis();
    private final long anchorNanos = System.nanoTime();

    Clock(double startEpochMs) {
      this.startEpochMs = startEpochMs;
    }

    double nowS() {
      return (anchorEpochMs + (System.nanoTime() - anchorNanos) / 1e6 - startEpochMs) / 1000.0;
    }

    void sleepUntil(double dueS) {
      long waitMs = (long) Math.floor((dueS - nowS()) * 1000.0);
      if (waitMs > 0) {
        try {
          Thread.sleep(waitMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
