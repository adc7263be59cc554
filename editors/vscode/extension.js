// The skopt extension: the grammar in syntaxes/ colours recipes; this file starts the language
// server, `skopt lsp`, over stdio and restarts it when the `skopt.path` setting changes.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function serverOptions() {
  const command = vscode.workspace.getConfiguration("skopt").get("path") || "skopt";
  return { command, args: ["lsp"], transport: TransportKind.stdio };
}

async function start() {
  client = new LanguageClient("skopt", "skopt", serverOptions(), {
    documentSelector: [
      { scheme: "file", language: "skopt" },
      { scheme: "untitled", language: "skopt" },
    ],
  });
  try {
    await client.start();
  } catch (error) {
    client = undefined; // it never ran: there is nothing to stop
    const command = serverOptions().command;
    vscode.window.showErrorMessage(
      `skopt: could not start '${command} lsp' (${error.message}); set skopt.path to the skopt executable.`,
    );
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

async function activate(context) {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("skopt.path")) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
