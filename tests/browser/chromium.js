// Debian's chromium, headless, driven by playwright-core (no browser download), with nothing
// that reaches the network on its own: the one launcher the browser checks share.
'use strict';

const { chromium } = require('playwright-core');

const FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// CHROMIUM names another binary (default /usr/bin/chromium).
function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
  });
}

module.exports = { launch };
