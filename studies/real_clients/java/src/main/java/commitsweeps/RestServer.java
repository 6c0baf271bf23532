package commitsweeps;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;

/**
 * A thin Iceberg REST catalog on 127.0.0.1: the routes a FastAppend writer uses, each handed to Iceberg's own
 * CatalogHandlers over a JdbcCatalog, so a commit takes the reference server's path (load, validate the
 * requirements, write the new metadata, the JDBC catalog's conditional UPDATE; a lost UPDATE is retried there,
 * a failed requirement answers 409 and the client retries). No auth, single-level namespaces only.
 */
final class RestServer {
  private RestServer() {}

  private static final ObjectMapper JSON = org.apache.iceberg.rest.HarnessMapper.mapper();

  static void serve(Args args) throws IOException {
    JdbcCatalog catalog = Catalogs.jdbc(args);
    int port = (int) Math.round(Double.parseDouble(args.get("port", "0")));
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    server.createContext("/v1/", exchange -> handle(catalog, exchange));
    // One thread a request in flight, as a servlet container's pool would have: commits race in the catalog.
    server.setExecutor(Executors.newFixedThreadPool(Integer.parseInt(args.get("threads", "16"))));
    server.start();
    System.out.println("{\"kind\":\"listening\",\"port\":" + server.getAddress().getPort() + "}");
    System.out.flush();
  }

  private static void handle(JdbcCatalog catalog, HttpExchange exchange) throws IOException {
    try {
      String method = exchange.getRequestMethod();
      String[] parts = exchange.getRequestURI().getRawPath().substring("/v1/".length()).split("/");
      Object answer = route(catalog, method, parts, exchange);
      if (answer == null) {
        reply(exchange, 204, null);
      } else {
        reply(exchange, 200, JSON.writeValueAsString(answer));
      }
    } catch (Exception e) {  // every failure answers the client, as the REST spec's error model
      int code = status(e);
      if (code == 500) {
        e.printStackTrace();  // the server's log (stderr): what the client sees only as a message
      }
      ErrorResponse error = ErrorResponse.builder().responseCode(code).withType(e.getClass().getSimpleName())
          .withMessage(String.valueOf(e.getMessage())).build();
      reply(exchange, code, ErrorResponseParser.toJson(error));
    } finally {
      exchange.close();
    }
  }

  private static Object route(JdbcCatalog catalog, String method, String[] p, HttpExchange exchange)
      throws IOException {
    if (p.length == 1 && p[0].equals("config")) {
      return ConfigResponse.builder().build();
    }
    if (p.length >= 1 && p[0].equals("namespaces")) {
      if (p.length == 1 && method.equals("POST")) {
        return CatalogHandlers.createNamespace(catalog, read(exchange, CreateNamespaceRequest.class));
      }
      if (p.length == 1 && method.equals("GET")) {
        return CatalogHandlers.listNamespaces(catalog, Namespace.empty());
      }
      Namespace namespace = Namespace.of(decode(p[1]).split("\u001f"));
      if (p.length == 2 && method.equals("HEAD")) {
        CatalogHandlers.namespaceExists(catalog, namespace);
        return null;
      }
      if (p.length == 2 && method.equals("GET")) {
        return CatalogHandlers.loadNamespace(catalog, namespace);
      }
      if (p.length == 3 && p[2].equals("tables") && method.equals("POST")) {
        return CatalogHandlers.createTable(catalog, namespace, read(exchange, CreateTableRequest.class));
      }
      if (p.length == 3 && p[2].equals("tables") && method.equals("GET")) {
        return CatalogHandlers.listTables(catalog, namespace);
      }
      if (p.length >= 4 && p[2].equals("tables")) {
        TableIdentifier id = TableIdentifier.of(namespace, decode(p[3]));
        if (p.length == 5 && p[4].equals("metrics")) {
          exchange.getRequestBody().readAllBytes();  // the client's reports: its writer reads its own
          return null;
        }
        switch (method) {
          case "GET":
            return CatalogHandlers.loadTable(catalog, id, RESTCatalogProperties.SnapshotMode.ALL);
          case "HEAD":
            CatalogHandlers.tableExists(catalog, id);
            return null;
          case "POST":
            return CatalogHandlers.updateTable(catalog, id, read(exchange, UpdateTableRequest.class));
          case "DELETE":
            CatalogHandlers.dropTable(catalog, id);
            return null;
          default:
            break;
        }
      }
    }
    throw new UnsupportedOperationException(method + " " + exchange.getRequestURI().getPath() + " is not served");
  }

  private static int status(Exception e) {
    if (e instanceof NoSuchNamespaceException || e instanceof NoSuchTableException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException || e instanceof CommitFailedException) {
      return 409;  // the client's FastAppend retries a 409 on a commit (CommitFailedException)
    }
    if (e instanceof IllegalArgumentException || e instanceof ValidationException) {
      return 400;
    }
    if (e instanceof UnsupportedOperationException) {
      return 406;
    }
    return 500;
  }

  private static <T> T read(HttpExchange exchange, Class<T> type) throws IOException {
    return JSON.readValue(exchange.getRequestBody(), type);
  }

  private static String decode(String segment) {
    return URLDecoder.decode(segment, StandardCharsets.UTF_8);
  }

  private static void reply(HttpExchange exchange, int code, String body) throws IOException {
    if (body == null || exchange.getRequestMethod().equals("HEAD")) {
      exchange.sendResponseHeaders(code, -1);
      return;
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
