package dev.confine.linux.child;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.ErrnoException;
import dev.confine.linux.sys.NativeAccess;
import dev.confine.linux.sys.Syscalls;
import dev.confine.testing.HostRequirements;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class SessionInputTest {
  private int[] pipe;

  @BeforeEach
  void openPipe() {
    HostRequirements.require(NativeAccess.availability());
    pipe = Syscalls.pipe2(LibC.O_CLOEXEC());
    Syscalls.setNonBlocking(pipe[1]);
  }

  @AfterEach
  void closeReadEnd() {
    if (pipe != null) {
      Syscalls.close(pipe[0]);
    }
  }

  private String readAll(int n) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(n);
      long got = 0;
      while (got < n) {
        long r = Syscalls.read(pipe[0], buf.asSlice(got), n - got);
        assertThat(r).isPositive();
        got += r;
      }
      return new String(buf.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }
  }

  @Test
  void aWriteLargerThanThePipeWaitsUntilTheReaderTakesIt() throws Exception {
    SessionInput input = new SessionInput(pipe[1]);
    byte[] data = "x".repeat(256 * 1024).getBytes(StandardCharsets.UTF_8); // four pipes' worth
    AtomicReference<String> read = new AtomicReference<>();
    Thread reader = Thread.ofPlatform().start(() -> read.set(readAll(data.length)));
    input.write(data);
    reader.join();
    input.close();
    assertThat(read.get()).isEqualTo(new String(data, StandardCharsets.UTF_8));
  }

  @Test
  void aClosedInputRefusesWritesAndResizesAndReportsTheDefaultControlChars() throws Exception {
    SessionInput input = new SessionInput(pipe[1]);
    input.write("hi".getBytes(StandardCharsets.UTF_8));
    assertThat(readAll(2)).isEqualTo("hi");
    input.close();
    input.close(); // twice is harmless

    assertThatThrownBy(() -> input.write(new byte[] {1}))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.EPIPE()));
    assertThatThrownBy(() -> input.resize(24, 80))
        .isInstanceOfSatisfying(
            ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LibC.EIO()));
    assertThat(input.controlChar(SessionInput.Control.INTERRUPT)).isEqualTo((byte) 0x03);
    assertThat(input.controlChar(SessionInput.Control.EOF)).isEqualTo((byte) 0x04);
  }
}
