package org.apache.iceberg.rest;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The JSON mapper Iceberg's REST client and its reference server use (RESTObjectMapper: kebab-case names, its
 * serializers, unknown fields ignored), which is package-private: this class sits in its package to hand it to
 * the harness's server, so that requests and answers are read and written exactly as the client expects.
 */
public final class HarnessMapper {
  private HarnessMapper() {}

  public static ObjectMapper mapper() {
    return RESTObjectMapper.mapper();
  }
}
