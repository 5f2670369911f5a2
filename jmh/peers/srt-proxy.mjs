// Starts the proxy of Anthropic's sandbox-runtime (srt) on its own, for the proxy benchmarks:
// the same modules srt's sandbox manager starts (its HTTP proxy server, its SOCKS5 server and the
// single-port front-end that tells them apart by the first byte), with an allow-list of the
// loopback address only, listening on 127.0.0.1. None of srt's code is copied here: the modules
// are imported from the installed package (scripts/bench installs it from the npm registry).
//
// Usage: node srt-proxy.mjs PACKAGE_DIR [mux|http]
//   mux  (default) as srt runs it: one TCP port; HTTP connections are piped by the front-end to
//        the HTTP server on a private unix socket, SOCKS5 ones handled in place
//   http the HTTP proxy server alone on a TCP port (no front-end hop): srt's best case
// Prints "listening PORT" on stdout once it accepts connections; runs until stdin closes.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [pkg, mode = 'mux'] = process.argv.slice(2);
if (!pkg || (mode !== 'mux' && mode !== 'http')) {
  console.error('usage: node srt-proxy.mjs PACKAGE_DIR [mux|http]');
  process.exit(2);
}
const load = (file) => import(pathToFileURL(join(pkg, 'dist', 'sandbox', file)).href);
const { createHttpProxyServer } = await load('http-proxy.js');

// The allow-list: the loopback address by either spelling, any port.
const allowed = new Set(['127.0.0.1', 'localhost']);
const filter = (_port, host) => allowed.has(host);

const http = createHttpProxyServer({ filter });
let port;
if (mode === 'http') {
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = http.address().port;
} else {
  const { createSocksProxyServer } = await load('socks-proxy.js');
  const { createMuxProxyServer } = await load('mux-proxy.js');
  const socks = createSocksProxyServer({ filter });
  const mux = createMuxProxyServer({
    httpServer: http,
    handleSocksConnection: (s) => socks.handleConnection(s),
  });
  await mux.listenHttpBackend();
  await new Promise((resolve) => mux.server.listen(0, '127.0.0.1', resolve));
  port = mux.getPort();
}
process.stdout.write(`listening ${port}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
