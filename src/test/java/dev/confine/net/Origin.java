package dev.confine.net;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A destination for proxy tests: the JDK's HTTP server on 127.0.0.1, recording every request.
 * {@code /hello} answers "hello", {@code /echo} its request body, {@code /stream} a chunked body
 * whose second chunk waits for {@link #releaseStream()}.
 */
final class Origin implements AutoCloseable {
  /** What the origin saw of a request. */
  record Seen(String method, String uri, Headers headers, int remotePort) {}

  private final HttpServer server;
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final CountDownLatch streamRelease = new CountDownLatch(1);

  Origin() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", this::handle);
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  List<Seen> seen() {
    return seen;
  }

  void releaseStream() {
    streamRelease.countDown();
  }

  private void handle(HttpExchange ex) throws IOException {
    byte[] body = ex.getRequestBody().readAllBytes();
    seen.add(
        new Seen(
            ex.getRequestMethod(),
            ex.getRequestURI().toString(),
            ex.getRequestHeaders(),
            ex.getRemoteAddress().getPort()));
    String path = ex.getRequestURI().getPath();
    switch (path) {
      case "/echo" -> send(ex, 200, body);
      case "/stream" -> {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream out = ex.getResponseBody()) {
          out.write("data: first\n\n".getBytes(StandardCharsets.UTF_8));
          out.flush();
          try {
            streamRelease.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          out.write("data: second\n\n".getBytes(StandardCharsets.UTF_8));
        }
      }
      default -> send(ex, 200, "hello".getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void send(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
