// Runs editors/vscode/extension.js in Node with stand-ins for the two modules that only VS Code
// provides (`vscode`, and `vscode-languageclient`, which needs it), and prints as JSON what the
// extension asked of them: activate, change `skopt.path`, deactivate; then a server that fails.
"use strict";

const Module = require("module");

const calls = [];
const settings = { path: process.argv[3] };
let onConfiguration;
let failStart = false;

const vscode = {
  workspace: {
    getConfiguration: (section) => ({ get: (key) => (section === "skopt" ? settings[key] : undefined) }),
    onDidChangeConfiguration: (listener) => {
      onConfiguration = listener;
      return { dispose() {} };
    },
  },
  window: { showErrorMessage: (message) => calls.push(["error", message]) },
};

class LanguageClient {
  constructor(id, name, server, client) {
    calls.push(["client", id, server, client.documentSelector]);
  }
  async start() {
    calls.push(["start"]);
    if (failStart) throw new Error("spawn skopt ENOENT");
  }
  async stop() {
    calls.push(["stop"]);
  }
}

const languageClient = { LanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } };
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return languageClient;
  return load.call(this, request, ...rest);
};

(async () => {
  const extension = require(process.argv[2]);
  const context = { subscriptions: [] };
  await extension.activate(context);
  calls.push(["subscriptions", context.subscriptions.length]);
  settings.path = process.argv[4];
  await onConfiguration({ affectsConfiguration: (name) => name === "skopt.trace.server" });
  await onConfiguration({ affectsConfiguration: (name) => name === "skopt.path" });
  await extension.deactivate();
  failStart = true;
  await extension.activate(context);
  await extension.deactivate(); // nothing to stop: the server never started
  console.log(JSON.stringify(calls));
})();
