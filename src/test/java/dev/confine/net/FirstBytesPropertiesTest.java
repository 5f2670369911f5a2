package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/** Random first bytes: never an exception, never a byte consumed, a name or a marker. */
class FirstBytesPropertiesTest {
  @Property(tries = 2000)
  void randomBytesAreReadSafely(
      @ForAll @Size(max = 300) byte[] bytes, @ForAll boolean tls, @ForAll boolean http) {
    if (bytes.length > 2 && tls) {
      bytes[0] = 0x16;
      bytes[1] = 3;
    } else if (bytes.length > 0 && http) {
      bytes[0] = 'G';
    }
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    String n = FirstBytes.name(in, 256);
    assertThat(in.readerIndex()).isZero();
    assertThat(n == null || n.length() <= 300).isTrue();
  }
}
