package dev.confine.net;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Netty's I/O: the native epoll transport where its library loads, the JDK's NIO otherwise. Both
 * serve TCP and unix sockets; only epoll can adopt a listening socket handed in as a descriptor.
 */
enum Transport {
  /** Netty's native epoll transport (Linux, its bundled library). */
  EPOLL {
    @Override
    IoHandlerFactory ioHandlers() {
      return EpollIoHandler.newFactory();
    }

    @Override
    ServerChannel tcpServer() {
      return new EpollServerSocketChannel();
    }

    @Override
    ServerChannel unixServer() {
      return new EpollServerDomainSocketChannel();
    }

    @Override
    SocketAddress unixAddress(Path path) {
      return new DomainSocketAddress(path.toFile());
    }

    @Override
    Channel tcpClient() {
      return new EpollSocketChannel();
    }
  },
  /** The JDK's NIO (selector) transport. */
  NIO {
    @Override
    IoHandlerFactory ioHandlers() {
      return NioIoHandler.newFactory();
    }

    @Override
    ServerChannel tcpServer() {
      return new NioServerSocketChannel();
    }

    @Override
    ServerChannel unixServer() {
      return new NioServerSocketChannel(SelectorProvider.provider(), SocketProtocolFamily.UNIX);
    }

    @Override
    SocketAddress unixAddress(Path path) {
      return UnixDomainSocketAddress.of(path);
    }

    @Override
    Channel tcpClient() {
      return new NioSocketChannel();
    }
  };

  /** Epoll where it loads, else NIO. */
  public static Transport best() {
    return Epoll.isAvailable() ? EPOLL : NIO;
  }

  /** Why epoll cannot be used here, or empty when it can. */
  public static Optional<String> epollUnavailability() {
    return Epoll.isAvailable()
        ? Optional.empty()
        : Optional.of(String.valueOf(Epoll.unavailabilityCause()));
  }

  abstract IoHandlerFactory ioHandlers();

  abstract ServerChannel tcpServer();

  abstract ServerChannel unixServer();

  abstract SocketAddress unixAddress(Path path);

  abstract Channel tcpClient();

  /** An event loop group of {@code threads} daemon threads named {@code confine-proxy-N}. */
  EventLoopGroup group(int threads) {
    return new MultiThreadIoEventLoopGroup(
        threads, new DefaultThreadFactory("confine-proxy", true), ioHandlers());
  }
}
