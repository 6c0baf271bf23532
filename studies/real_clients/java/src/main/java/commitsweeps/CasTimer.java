package commitsweeps;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Properties;

/**
 * The JdbcCatalog's compare-and-swap timed alone: `UPDATE ... SET v = new WHERE k = 'row' AND v = old` on a scratch
 * table of the catalog's database, through the same JDBC driver, one auto-committed statement each, as
 * JdbcTableOperations commits. Its median is the model's --catalog-latency-ms.
 */
final class CasTimer {
  private CasTimer() {}

  static void time(Args args) throws SQLException {
    int rounds = (int) args.number("rounds");
    Properties props = new Properties();
    props.putAll(args.withPrefix("prop.jdbc."));  // --prop.jdbc.user postgres, as the catalog's own
    double[] ms = new double[rounds];
    try (Connection db = DriverManager.getConnection(args.get("uri"), props)) {
      db.setAutoCommit(true);
      try (Statement s = db.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS commit_sweeps_cas_probe (k VARCHAR(64) PRIMARY KEY, v VARCHAR(1024))");
        s.execute("DELETE FROM commit_sweeps_cas_probe");
        s.execute("INSERT INTO commit_sweeps_cas_probe VALUES ('row', '0')");
      }
      try (PreparedStatement update = db.prepareStatement(
          "UPDATE commit_sweeps_cas_probe SET v = ? WHERE k = 'row' AND v = ?")) {
        for (int i = 0; i < rounds; i++) {
          update.setString(1, Integer.toString(i + 1));
          update.setString(2, Integer.toString(i));
          long start = System.nanoTime();
          int done = update.executeUpdate();
          ms[i] = (System.nanoTime() - start) / 1e6;
          if (done != 1) {
            throw new IllegalStateException("the conditional UPDATE missed its own row");
          }
        }
      }
      try (Statement s = db.createStatement()) {
        s.execute("DROP TABLE commit_sweeps_cas_probe");
      }
    }
    Arrays.sort(ms);
    double median = rounds % 2 == 1 ? ms[rounds / 2] : (ms[rounds / 2 - 1] + ms[rounds / 2]) / 2.0;
    System.out.println("{\"kind\":\"cas\",\"median_ms\":" + median + ",\"rounds\":" + rounds + "}");
  }
}
