package commitsweeps;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** `--name value` pairs, read once; every error names the flag and what it takes (one line, exit 2). */
final class Args {
  private final Map<String, String> values = new HashMap<>();

  Args(String[] argv, int from) {
    for (int i = from; i < argv.length; i += 2) {
      if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
        throw new UsageError("'" + argv[i] + "' is not allowed; expected --name value pairs");
      }
      values.put(argv[i].substring(2), argv[i + 1]);
    }
  }

  String get(String name) {
    String value = values.get(name);
    if (value == null) {
      throw new UsageError("--" + name + " is missing");
    }
    return value;
  }

  String get(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  double number(String name) {
    try {
      return Double.parseDouble(get(name));
    } catch (NumberFormatException e) {
      throw new UsageError("--" + name + ": '" + get(name) + "' is not allowed; expected a number");
    }
  }

  List<Double> numbers(String name) {
    List<Double> out = new ArrayList<>();
    for (String part : get(name).split(",")) {
      try {
        out.add(Double.parseDouble(part));
      } catch (NumberFormatException e) {
        throw new UsageError("--" + name + ": '" + get(name) + "' is not allowed; expected comma-separated numbers");
      }
    }
    return out;
  }

  /** Every flag starting with `prefix`, less the prefix: catalog properties passed through as they are. */
  Map<String, String> withPrefix(String prefix) {
    Map<String, String> out = new HashMap<>();
    values.forEach((k, v) -> {
      if (k.startsWith(prefix)) {
        out.put(k.substring(prefix.length()), v);
      }
    });
    return out;
  }

  static final class UsageError extends RuntimeException {
    UsageError(String message) {
      super(message);
    }
  }
}
