package commitsweeps;

import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;

/**
 * The catalog's metrics reporter (`metrics-reporter-impl`): keeps the attempts of the last CommitReport of each
 * thread. SnapshotProducer.commit reports a successful commit on the committing thread before it returns, so the
 * writer reads its own commit's attempts right after the call; a failed commit reports nothing.
 */
public class AttemptsReporter implements MetricsReporter {
  private static final ThreadLocal<Long> LAST_ATTEMPTS = new ThreadLocal<>();

  @Override
  public void report(MetricsReport report) {
    if (report instanceof CommitReport) {
      CounterResult attempts = ((CommitReport) report).commitMetrics().attempts();
      LAST_ATTEMPTS.set(attempts == null ? -1L : attempts.value());
    }
  }

  /** The attempts of this thread's last reported commit, -1 if none was reported since the last take. */
  static long take() {
    Long value = LAST_ATTEMPTS.get();
    LAST_ATTEMPTS.remove();
    return value == null ? -1L : value;
  }
}
