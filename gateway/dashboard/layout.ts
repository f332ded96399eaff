/** The frame every dashboard page shares: head, skip link, navigation, flash message, logout. */
import { type HtmlValue, html, type SafeHtml } from "./html.js";

/** The pages in the navigation, in order: path under /dashboard and label. */
export const NAV = [
  ["", "Overview"],
  ["sessions", "Sessions"],
  ["access", "Pairing & approvals"],
  ["cron", "Cron jobs"],
  ["knowledge", "Skills & memory"],
  ["usage", "Usage"],
  ["logs", "Logs"],
] as const;

/** What one page gives the frame. */
export interface PageFrame {
  title: string;
  /** The NAV path this page belongs to. */
  nav: (typeof NAV)[number][0];
  csrf: string;
  /** Show the logout button (a login exists). */
  loggedIn: boolean;
  body: HtmlValue;
  flash?: { text: string; error: boolean } | undefined;
  /** The element the live updates refresh (its content is the page's fragment). */
  live?: boolean | undefined;
}

/** A whole page. */
export function page(frame: PageFrame): SafeHtml {
  const nav = NAV.map(
    ([path, label]) =>
      html`<li><a href="/dashboard/${path}"${path === frame.nav ? html` aria-current="page"` : ""}>${label}</a></li>`,
  );
  const flash = frame.flash
    ? html`<div class="flash${frame.flash.error ? " error" : ""}" role="${frame.flash.error ? "alert" : "status"}">${frame.flash.text}</div>`
    : "";
  const body = frame.live
    ? html`<div data-live aria-live="polite">${frame.body}</div><p class="live muted">Updates: <span id="live-status">connecting…</span></p>`
    : frame.body;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${frame.title} · Herald</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/dashboard/">Herald</a><nav aria-label="Dashboard"><ul>${nav}</ul></nav>
${frame.loggedIn ? html`<form method="post" action="/dashboard/logout"><input type="hidden" name="_csrf" value="${frame.csrf}"><button class="secondary" type="submit">Log out</button></form>` : ""}</header>
<main id="main"><h1>${frame.title}</h1>${flash}${body}</main>
<script src="/dashboard/assets/app.js" defer></script></body></html>`;
}

/** A POST button as a small form carrying the CSRF token and hidden fields. */
export function actionButton(options: {
  action: string;
  label: string;
  csrf: string;
  fields?: Record<string, string>;
  confirm?: string;
  kind?: "danger" | "secondary";
  /** Accessible name when the label alone is ambiguous in a list ("Approve telegram:42"). */
  ariaLabel?: string;
}): SafeHtml {
  const hidden = Object.entries(options.fields ?? {}).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  );
  return html`<form class="inline" method="post" action="${options.action}"${options.confirm ? html` data-confirm="${options.confirm}"` : ""}><input type="hidden" name="_csrf" value="${options.csrf}">${hidden}<button type="submit"${options.kind ? html` class="${options.kind}"` : ""}${options.ariaLabel ? html` aria-label="${options.ariaLabel}"` : ""}>${options.label}</button></form>`;
}

/** The login page. */
export function loginPage(error?: string): SafeHtml {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Log in · Herald</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>
<body><main id="main" class="login"><h1>Herald dashboard</h1>
${error ? html`<div class="flash error" role="alert">${error}</div>` : ""}
<form method="post" action="/dashboard/login">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<p class="muted">The dashboard password (DASHBOARD_PASSWORD) or the API server key (API_SERVER_KEY).</p>
<button type="submit">Log in</button></form></main></body></html>`;
}

/** A page saying why the dashboard is refused. */
export function refusedPage(reason: string): SafeHtml {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Refused · Herald</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>
<body><main id="main" class="login"><h1>Dashboard refused</h1><div class="flash error" role="alert">${reason}</div></main></body></html>`;
}

/**
 * The "Agent:" links of a page listing several agents' things: the chosen one in bold, the others
 * linked by `href(agent)` (undefined: the unfiltered view, named `none`). Empty without further agents.
 */
export function agentFilter(
  agents: readonly string[],
  chosen: string | undefined,
  href: (agent: string | undefined) => string,
  none = "all",
): SafeHtml | "" {
  if (agents.length === 0) return "";
  return html`<nav class="filter" aria-label="Agent" id="agent-filter">Agent: ${[undefined, ...agents].map(
    (a) =>
      a === chosen
        ? html`<strong aria-current="true">${a ?? none}</strong> `
        : html`<a href="${href(a)}">${a ?? none}</a> `,
  )}</nav>`;
}
