package commitsweeps;

import java.util.Arrays;

/**
 * The harness's commands, one JVM each:
 *
 * <pre>
 *   create    --catalog jdbc|rest --uri U [--warehouse W] [--s3-endpoint E] --namespace N --tables t0,t1
 *   write     (the same catalog flags) --namespace N --writers 0,1 --writer-tables t0,t1 --phases-s 0.4,1.3
 *             --interval-s S --duration-s D      prints {"kind":"ready"}, reads the start (epoch ms) on stdin,
 *                                                then one JSON line per commit and {"kind":"cpu"} at the end
 *   snapshots (the same catalog flags) --namespace N --tables t0,t1     one JSON line per table
 *   serve     --uri jdbc:... --warehouse W [--s3-endpoint E] [--port 0]  an Iceberg REST catalog on 127.0.0.1
 *   time-cas  --uri jdbc:... --rounds 200        the JDBC catalog's conditional UPDATE alone: {"median_ms": ...}
 * </pre>
 */
public final class Main {
  private Main() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length == 0) {
      fail("expected a command: create, write, snapshots, serve or time-cas");
    }
    try {
      Args args = new Args(argv, 1);
      switch (argv[0]) {
        case "create" -> Writers.create(args);
        case "write" -> Writers.write(args);
        case "snapshots" -> Writers.snapshots(args);
        case "serve" -> RestServer.serve(args);
        case "time-cas" -> CasTimer.time(args);
        default -> fail("command: '" + argv[0] + "' is not allowed; expected create, write, snapshots, serve or time-cas");
      }
    } catch (Args.UsageError e) {
      fail(e.getMessage() + " (" + String.join(" ", Arrays.copyOf(argv, 1)) + ")");
    }
  }

  private static void fail(String message) {
    System.err.println("iceberg-writers: error: " + message);
    System.exit(2);
  }
}
