package dev.confine.net;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Which addresses are not the public internet, in every spelling a resolver may return. */
class SpecialAddressesTest {

  @ParameterizedTest
  @CsvSource({
    "127.0.0.1, loopback",
    "127.255.0.9, loopback",
    "::1, loopback",
    "::ffff:127.0.0.1, loopback",
    "::127.0.0.1, loopback",
    "64:ff9b::7f00:1, loopback",
    "2002:7f00:1::1, loopback",
    "169.254.169.254, link-local",
    "64:ff9b::a9fe:a9fe, link-local",
    "fe80::1, link-local",
    "10.0.0.1, private",
    "172.16.5.5, private",
    "172.31.255.255, private",
    "192.168.0.1, private",
    "fd00::1, unique local (private)",
    "100.64.0.1, carrier-grade NAT",
    "100.127.255.255, carrier-grade NAT",
    "224.0.0.1, multicast",
    "ff02::1, multicast",
    "0.0.0.0, unspecified",
    "::, unspecified",
    "255.255.255.255, reserved",
    "fec0::1, site-local",
  })
  void nonPublicAddressesAreNamed(String address, String kind) {
    assertThat(SpecialAddresses.kind(HostNames.ipLiteral(address).orElseThrow())).hasValue(kind);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "93.184.216.34",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808"
      })
  void publicAddressesAreNotSpecial(String address) {
    assertThat(SpecialAddresses.kind(HostNames.ipLiteral(address).orElseThrow())).isEmpty();
  }
}
