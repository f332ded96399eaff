/** The `irc:` config section: its schema and parsed type. */
import { z } from "zod";
import { platformSection } from "../../core/platform.js";

/** The `irc:` section of config.yaml. */
export const ircSchema = platformSection({
  /** The server's host name; starts the platform. */
  server: z.string().min(1).optional(),
  /** @defaultValue 6697 (TLS), 6667 without */
  port: z.number().int().min(1).max(65535).optional(),
  /** @defaultValue true */
  tls: z.boolean().default(true),
  /** The bot's nick. @defaultValue herald */
  nick: z
    .string()
    .regex(
      /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]{0,29}$/,
      "an IRC nick: a letter or [ ] \\ ` _ ^ { | } first",
    )
    .default("herald"),
  /** Channels to join (`#herald`, `#ops`). */
  channels: z
    .array(z.string().regex(/^[#&+!][^\s,:\u0007]{1,49}$/, "a channel name such as #herald"))
    .default([]),
  /** Server password (PASS), if the server wants one. */
  password: z.string().min(1).optional(),
  /** SASL PLAIN account and password (NickServ login on connect). */
  saslAccount: z.string().min(1).optional(),
  saslPassword: z.string().min(1).optional(),
  /** Lines sent at once before pacing starts (flood control). @defaultValue 5 */
  sendBurst: z.number().int().min(1).max(100).default(5),
  /** Lines per second after the burst. @defaultValue 1 */
  sendPerSecond: z.number().positive().max(50).default(1),
});

/** The parsed `irc:` section. */
export type IrcSection = z.infer<typeof ircSchema>;
