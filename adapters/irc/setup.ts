/**
 * IRC's step of `herald setup`: the server (a connection is opened, with TLS when asked), the nick and
 * channels, SASL if the network wants it, and the owner's hostmask or account.
 */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, CHECK_TIMEOUT_MS, checked, secret, tryAgain } from "../../core/setup-steps.js";

/** The IRC server accepts a connection (TCP, or TLS with a valid certificate). */
export async function checkIrc(host: string, port: number, tls: boolean): Promise<void> {
  const { connect: tcp } = await import("node:net");
  const { connect: tlsConnect } = await import("node:tls");
  await new Promise<void>((resolve, reject) => {
    const fail = (reason: string) =>
      reject(
        new CheckFailed(
          `Cannot connect to the IRC server ${host}:${port}${tls ? " (TLS)" : ""}: ${reason}. Check the server, port and TLS setting.`,
        ),
      );
    const socket = tls
      ? tlsConnect({ host, port, servername: host }, () => {
          socket.destroy();
          resolve();
        })
      : tcp({ host, port }, () => {
          socket.destroy();
          resolve();
        });
    socket.setTimeout(CHECK_TIMEOUT_MS, () => {
      socket.destroy();
      fail("no answer");
    });
    socket.on("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
  });
}
async function ircStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const server = await p.text({
      key: "irc.server",
      message: "IRC server, e.g. irc.libera.chat",
      initial: files.get("irc.server") as string | undefined,
    });
    if (!server) return p.say("warn", "IRC skipped: no server.");
    const tls = await p.confirm({
      key: "irc.tls",
      message: "Use TLS?",
      initial: (files.get("irc.tls") as boolean | undefined) ?? true,
    });
    const port = Number(
      await p.text({
        key: "irc.port",
        message: "Port",
        initial: String(files.get("irc.port") ?? (tls ? 6697 : 6667)),
      }),
    );
    const ok = await checked(
      ctx,
      `Connecting to ${server}:${port}`,
      () => checkIrc(server, port, tls).then(() => true),
      () => `IRC server ${server}:${port} answers`,
    );
    if (!ok) {
      if (await tryAgain(ctx, "IRC server")) continue;
      return;
    }
    const nick = await p.text({
      key: "irc.nick",
      message: "The bot's nick",
      initial: (files.get("irc.nick") as string | undefined) ?? "herald",
    });
    const channels = await p.text({
      key: "irc.channels",
      message: "Channels to join, comma list (e.g. #herald)",
    });
    files.set("irc.server", server);
    files.set("irc.port", port);
    files.set("irc.tls", tls);
    if (nick) files.set("irc.nick", nick);
    if (channels)
      files.set(
        "irc.channels",
        channels
          .split(",")
          .map((c) => c.trim())
          .filter(Boolean),
      );
    const account = await p.text({
      key: "irc.sasl_account",
      message: "SASL account (services login; empty skips)",
    });
    if (account) {
      const password = await secret(ctx, "irc.sasl_password", "IRC_SASL_PASSWORD", "SASL password");
      files.set("irc.sasl_account", account);
      if (password.isNew && password.value) files.setEnv("IRC_SASL_PASSWORD", password.value);
    }
    const owner = await p.text({
      key: "irc.owner",
      message:
        "Your hostmask, nick!user@host as the server shows it (/whois yourself), or account:<name> (empty skips)",
    });
    return addOwner(ctx, "irc", owner);
  }
}

/** IRC in `herald setup`. */
export const ircSetup: SetupQuestions = {
  label: "IRC",
  hint: "server, nick, channels (SASL optional)",
  chosenBy: "irc.server",
  flags: [
    { flag: "--irc-server <host>", key: "irc.server", env: "IRC_SERVER", help: "env IRC_SERVER" },
    { flag: "--irc-port <port>", key: "irc.port", env: "IRC_PORT" },
    { flag: "--irc-tls <bool>", key: "irc.tls", env: "IRC_TLS", help: "true or false" },
    { flag: "--irc-nick <nick>", key: "irc.nick", env: "IRC_NICK" },
    {
      flag: "--irc-channels <list>",
      key: "irc.channels",
      env: "IRC_CHANNELS",
      help: "comma list, e.g. #herald",
    },
    { flag: "--irc-sasl-account <name>", key: "irc.sasl_account", env: "IRC_SASL_ACCOUNT" },
    {
      flag: "--irc-sasl-password <password>",
      key: "irc.sasl_password",
      env: "IRC_SASL_PASSWORD",
      help: "env IRC_SASL_PASSWORD",
    },
    { flag: "--irc-owner <hostmask>", key: "irc.owner", help: "nick!user@host or account:<name>" },
  ],
  step: ircStep,
};
