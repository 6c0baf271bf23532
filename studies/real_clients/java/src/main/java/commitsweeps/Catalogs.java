package commitsweeps;

import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalog;

/** The catalog a harness command talks to: a JdbcCatalog (SQLite or PostgreSQL) or a RESTCatalog client. */
final class Catalogs {
  private Catalogs() {}

  /**
   * The FileIO properties: S3FileIO on the lab's MinIO when --s3-endpoint is given (credentials from the
   * environment, as `scripts/store-lab.sh env` exports them), else a local directory.
   */
  static Map<String, String> fileIo(Args args) {
    Map<String, String> props = new HashMap<>();
    String endpoint = args.get("s3-endpoint", "");
    if (endpoint.isEmpty()) {
      props.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
      return props;
    }
    props.put(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.aws.s3.S3FileIO");
    props.put("s3.endpoint", endpoint);
    props.put("s3.path-style-access", "true");  // MinIO on loopback: no bucket.host names
    props.put("s3.access-key-id", env("AWS_ACCESS_KEY_ID"));
    props.put("s3.secret-access-key", env("AWS_SECRET_ACCESS_KEY"));
    props.put("client.region", System.getenv().getOrDefault("AWS_DEFAULT_REGION", "us-east-1"));
    return props;
  }

  /** A JdbcCatalog on --uri (jdbc:sqlite:... or jdbc:postgresql://...), tables under --warehouse. */
  static JdbcCatalog jdbc(Args args) {
    Map<String, String> props = new HashMap<>(fileIo(args));
    props.put(CatalogProperties.URI, args.get("uri"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, args.get("warehouse"));
    props.put(CatalogProperties.METRICS_REPORTER_IMPL, AttemptsReporter.class.getName());
    props.putAll(args.withPrefix("prop."));  // e.g. --prop.jdbc.user, --prop.clients
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize("lab", props);
    return catalog;
  }

  /** The catalog --catalog names: jdbc, or rest (a RESTCatalog client of the server at --uri). */
  static Catalog open(Args args) {
    String kind = args.get("catalog");
    if (kind.equals("jdbc")) {
      return jdbc(args);
    }
    if (!kind.equals("rest")) {
      throw new Args.UsageError("--catalog: '" + kind + "' is not allowed; expected jdbc or rest");
    }
    Map<String, String> props = new HashMap<>(fileIo(args));
    props.put(CatalogProperties.URI, args.get("uri"));
    props.put(CatalogProperties.METRICS_REPORTER_IMPL, AttemptsReporter.class.getName());
    props.putAll(args.withPrefix("prop."));
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize("lab", props);
    return catalog;
  }

  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      throw new Args.UsageError(name + " is not set; run eval \"$(scripts/store-lab.sh env)\"");
    }
    return value;
  }
}
