/**
 * Email's step of `herald setup`: the address and password, the IMAP and SMTP servers (an IMAP login
 * and an SMTP verify with the adapter's own settings), whose Authentication-Results to trust, and the
 * owner's own address.
 */

import { CheckFailed, type SetupQuestions, type StepContext } from "../../core/setup.js";
import { addOwner, CHECK_TIMEOUT_MS, checked, secret, tryAgain } from "../../core/setup-steps.js";

/** What the email check logs in with. */
export interface MailSettings {
  address: string;
  password: string;
  imapHost: string;
  imapPort: number;
  smtpHost: string;
  smtpPort: number;
  tls: boolean;
}

/** Logs in to IMAP and verifies SMTP with the same settings the email adapter uses. */
export async function checkEmail(settings: MailSettings): Promise<void> {
  const { ImapFlow } = await import("imapflow");
  const implicitImap = settings.tls && settings.imapPort === 993;
  const imap = new ImapFlow({
    host: settings.imapHost,
    port: settings.imapPort,
    secure: implicitImap,
    doSTARTTLS: settings.tls && !implicitImap,
    auth: { user: settings.address, pass: settings.password },
    logger: false,
    connectionTimeout: CHECK_TIMEOUT_MS,
    greetingTimeout: CHECK_TIMEOUT_MS,
  });
  imap.on("error", () => {});
  try {
    await imap.connect();
  } catch (err) {
    const auth = (err as { authenticationFailed?: boolean }).authenticationFailed;
    throw new CheckFailed(
      auth
        ? `IMAP login to ${settings.imapHost} was refused: check the address and password (many providers need an app password).`
        : `Cannot connect to IMAP at ${settings.imapHost}:${settings.imapPort} (${(err as Error).message}). Check the host, port and TLS.`,
    );
  } finally {
    await imap.logout().catch(() => imap.close());
  }
  const nodemailer = (await import("nodemailer")).default;
  const implicitSmtp = settings.tls && settings.smtpPort === 465;
  const smtp = nodemailer.createTransport({
    host: settings.smtpHost,
    port: settings.smtpPort,
    secure: implicitSmtp,
    requireTLS: settings.tls && !implicitSmtp,
    ignoreTLS: !settings.tls,
    auth: { user: settings.address, pass: settings.password },
    connectionTimeout: CHECK_TIMEOUT_MS,
    greetingTimeout: CHECK_TIMEOUT_MS,
  });
  try {
    await smtp.verify();
  } catch (err) {
    throw new CheckFailed(
      `SMTP at ${settings.smtpHost}:${settings.smtpPort} refused (${(err as Error).message}). Check the host, port, TLS and password.`,
    );
  } finally {
    smtp.close();
  }
}

async function emailStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  for (;;) {
    const address = await p.text({
      key: "email.address",
      message: "The assistant's email address",
      initial: files.get("email.address") as string | undefined,
    });
    if (!address) return p.say("warn", "Email skipped: no address.");
    const password = await secret(ctx, "email.password", "EMAIL_PASSWORD", "Its password (or app password)");
    const domain = address.split("@")[1] ?? "";
    const imapHost = await p.text({
      key: "email.imap_host",
      message: "IMAP host",
      initial: (files.get("email.imap_host") as string | undefined) ?? `imap.${domain}`,
    });
    const imapPort = Number(
      await p.text({
        key: "email.imap_port",
        message: "IMAP port",
        initial: String(files.get("email.imap_port") ?? 993),
      }),
    );
    const smtpHost = await p.text({
      key: "email.smtp_host",
      message: "SMTP host",
      initial: (files.get("email.smtp_host") as string | undefined) ?? `smtp.${domain}`,
    });
    const smtpPort = Number(
      await p.text({
        key: "email.smtp_port",
        message: "SMTP port",
        initial: String(files.get("email.smtp_port") ?? 587),
      }),
    );
    const tls = await p.confirm({
      key: "email.tls",
      message: "Use TLS?",
      initial: (files.get("email.tls") as boolean | undefined) ?? true,
    });
    if (!password.value || !imapHost || !smtpHost)
      return p.say("warn", "Email skipped: incomplete settings.");
    const settings = { address, password: password.value, imapHost, imapPort, smtpHost, smtpPort, tls };
    const ok = await checked(
      ctx,
      "Logging in to IMAP and verifying SMTP",
      () => checkEmail(settings).then(() => true),
      () => "IMAP login and SMTP verify passed",
    );
    if (!ok) {
      if (await tryAgain(ctx, "email settings")) continue;
      return;
    }
    files.set("email.address", address);
    files.set("email.imap_host", imapHost);
    files.set("email.imap_port", imapPort);
    files.set("email.smtp_host", smtpHost);
    files.set("email.smtp_port", smtpPort);
    files.set("email.tls", tls);
    if (password.isNew) files.setEnv("EMAIL_PASSWORD", password.value);
    await trustedAuthservStep(ctx);
    const owner = await p.text({
      key: "email.owner",
      message: "Your own email address (mail from it is answered; empty skips)",
    });
    return addOwner(ctx, "email", owner);
  }
}

/** `email.trusted_authserv_id`: whose Authentication-Results header vouches for senders. */
async function trustedAuthservStep({ p, files }: StepContext): Promise<void> {
  p.say(
    "info",
    "Herald answers a mail only when your mail server vouches for its sender (Authentication-Results: dmarc=pass, or dkim/spf=pass for the sender's domain). Name that server: the first word after 'Authentication-Results:' in the source of a mail you received, e.g. mx.google.com.",
  );
  const id = (
    await p.text({
      key: "email.trusted_authserv_id",
      message: "Your mail server's authserv-id (empty: the topmost Authentication-Results header counts)",
      initial: files.get("email.trusted_authserv_id") as string | undefined,
    })
  )?.trim();
  // The config schema's rule: one word. Empty trusts the topmost header, safe only if the server writes one into every mail.
  if (id && /^[^\s;()"\\]+$/.test(id)) files.set("email.trusted_authserv_id", id);
  else
    p.say(
      "warn",
      `${id ? `'${id}' is not an authserv-id` : "No authserv-id"}: the topmost header counts, whoever wrote it.`,
    );
}

/** Email in `herald setup`. */
export const emailSetup: SetupQuestions = {
  label: "Email",
  hint: "IMAP + SMTP",
  chosenBy: "email.address",
  flags: [
    {
      flag: "--email-address <address>",
      key: "email.address",
      env: "EMAIL_ADDRESS",
      help: "env EMAIL_ADDRESS",
    },
    {
      flag: "--email-password <password>",
      key: "email.password",
      env: "EMAIL_PASSWORD",
      help: "env EMAIL_PASSWORD",
    },
    { flag: "--imap-host <host>", key: "email.imap_host", env: "EMAIL_IMAP_HOST" },
    { flag: "--imap-port <port>", key: "email.imap_port", env: "EMAIL_IMAP_PORT" },
    { flag: "--smtp-host <host>", key: "email.smtp_host", env: "EMAIL_SMTP_HOST" },
    { flag: "--smtp-port <port>", key: "email.smtp_port", env: "EMAIL_SMTP_PORT" },
    { flag: "--email-tls <bool>", key: "email.tls", env: "EMAIL_TLS", help: "true or false" },
    {
      flag: "--email-authserv-id <id>",
      key: "email.trusted_authserv_id",
      env: "EMAIL_TRUSTED_AUTHSERV_ID",
      help: "env EMAIL_TRUSTED_AUTHSERV_ID: your mail server's name in Authentication-Results, e.g. mx.google.com",
    },
    { flag: "--email-owner <address>", key: "email.owner", help: "your own address" },
  ],
  step: emailStep,
};
