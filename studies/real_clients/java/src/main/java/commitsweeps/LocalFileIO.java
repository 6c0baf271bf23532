package commitsweeps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * A FileIO over a local directory, for a warehouse without an object store (the smoke test). Iceberg's own local
 * FileIO is HadoopFileIO, which would bring Hadoop into a harness that otherwise needs none.
 */
public class LocalFileIO implements FileIO {
  private static Path path(String location) {
    String bare = location.startsWith("file:") ? location.replaceFirst("^file:(//)?", "") : location;
    return Paths.get(bare.startsWith("/") ? bare : "/" + bare);
  }

  @Override
  public InputFile newInputFile(String location) {
    return org.apache.iceberg.Files.localInput(path(location).toFile());
  }

  @Override
  public OutputFile newOutputFile(String location) {
    Path file = path(location);
    try {
      Files.createDirectories(file.getParent());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return org.apache.iceberg.Files.localOutput(file.toFile());
  }

  @Override
  public void deleteFile(String location) {
    try {
      Files.deleteIfExists(path(location));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
