package dev.confine.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * What the tunnel benchmarks share: a loopback sink that reads {@link #BYTES} from each connection
 * and acknowledges the last byte with one byte, and the client side (CONNECT through a proxy, then
 * the bytes written in 64 KiB chunks until the acknowledgement).
 */
final class BenchTunnel implements AutoCloseable {
  static final long BYTES = 256L << 20;

  private final ServerSocket sink;
  private final byte[] chunk = new byte[64 * 1024];

  BenchTunnel() throws IOException {
    sink = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofPlatform().daemon().start(this::serveSink);
  }

  int port() {
    return sink.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    sink.close();
  }

  private void serveSink() {
    while (!sink.isClosed()) {
      try {
        Socket s = sink.accept();
        Thread.ofPlatform().daemon().start(() -> drain(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void drain(Socket s) {
    byte[] buf = new byte[256 * 1024];
    try (s) {
      InputStream in = s.getInputStream();
      long total = 0;
      while (total < BYTES) {
        int n = in.read(buf);
        if (n < 0) {
          return;
        }
        total += n;
      }
      s.getOutputStream().write(1);
    } catch (IOException e) {
      // the client went away
    }
  }

  /** The bytes straight to the sink. */
  int direct() throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()));
      return send(s);
    }
  }

  /** The bytes through a CONNECT tunnel of the HTTP proxy at {@code proxy}. */
  int through(InetSocketAddress proxy) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(proxy);
      OutputStream out = s.getOutputStream();
      out.write(
          ("CONNECT 127.0.0.1:" + port() + " HTTP/1.1\r\nHost: 127.0.0.1:" + port() + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      int state = 0;
      StringBuilder head = new StringBuilder();
      while (state < 4) {
        int c = in.read();
        if (c < 0) {
          throw new IOException("the proxy closed the tunnel: " + head);
        }
        head.append((char) c);
        state = (c == '\r' || c == '\n') ? state + 1 : 0;
      }
      if (!head.toString().startsWith("HTTP/1.1 200")) {
        throw new IOException("the proxy refused the tunnel: " + head.toString().strip());
      }
      return send(s);
    }
  }

  private int send(Socket s) throws IOException {
    s.setTcpNoDelay(true);
    OutputStream out = s.getOutputStream();
    for (long sent = 0; sent < BYTES; sent += chunk.length) {
      out.write(chunk);
    }
    out.flush();
    return s.getInputStream().read();
  }
}
