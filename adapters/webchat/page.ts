/**
 * The web chat's HTML: the chat page (a shell the script fills), the login page and the invite page.
 * No inline script or style anywhere (the CSP forbids both); what the script needs (the CSRF token,
 * who is logged in) is in `<meta>` tags, every value escaped.
 */
import type { WebAssets } from "./assets.js";

/** The response headers of every page and API answer. */
export const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** `text` safe inside HTML text and double-quoted attributes. */
export function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

function shell(assets: WebAssets, title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, interactive-widget=resizes-content">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${assets.base}chat.css">
${head}
</head>
<body>
${body}
</body>
</html>`;
}

/** The chat page: the script builds the conversation into it. */
export function chatPage(
  assets: WebAssets,
  who: { name: string; csrf: string; owner: boolean; canLogout: boolean; voice: boolean },
): string {
  const head = `<meta name="herald-csrf" content="${esc(who.csrf)}">
<meta name="herald-user" content="${esc(who.name)}">
<meta name="herald-owner" content="${who.owner ? "1" : "0"}">
<meta name="herald-logout" content="${who.canLogout ? "1" : "0"}">
<meta name="herald-voice" content="${who.voice ? "1" : "0"}">
<link rel="preload" href="/chat/api/history" as="fetch" crossorigin>
<script type="module" src="${assets.base}app.js"></script>
${["conversation.js", "render.js", "marked.js"].map((m) => `<link rel="modulepreload" href="${assets.base}${m}">`).join("\n")}`;
  const body = `<div class="app">
<aside id="sidebar" class="sidebar" aria-label="Sessions">
  <div class="side-head">
    <button type="button" id="new-session" class="primary">New chat</button>
    <button type="button" id="close-sidebar" class="icon only-narrow" aria-label="Close the session list">✕</button>
  </div>
  <form id="search-form" role="search">
    <input id="search" type="search" placeholder="Search messages" aria-label="Search messages" autocomplete="off">
  </form>
  <ul id="sessions" class="sessions"></ul>
  <ul id="hits" class="hits" hidden></ul>
  <div class="side-foot">
    <button type="button" id="invite" class="link" hidden>Invite someone…</button>
    <button type="button" id="logout" class="link" hidden>Log out</button>
  </div>
</aside>
<main class="main">
  <header class="top">
    <button type="button" id="open-sidebar" class="icon only-narrow" aria-label="Sessions">☰</button>
    <h1 id="title">Herald</h1>
    <span id="status" class="status" aria-live="polite"></span>
  </header>
  <div id="log" class="log" role="log" aria-live="polite" aria-label="Conversation">
    <button type="button" id="older" class="link older" hidden>Show earlier messages</button>
    <div id="turns"></div>
  </div>
  <form id="composer" class="composer">
    <ul id="complete" class="complete" role="listbox" aria-label="Commands" hidden></ul>
    <div id="pending-files" class="pending-files"></div>
    <div class="row">
      <label class="attach" title="Attach a file"><input id="file" type="file" multiple aria-label="Attach a file"><span aria-hidden="true">+</span></label>
      <button type="button" id="record" class="icon record" aria-label="Record a voice note" aria-pressed="false" hidden>●</button>
      <textarea id="input" rows="1" placeholder="Message (Enter sends, Shift+Enter: new line, Esc stops)" aria-label="Message" autocomplete="off"></textarea>
      <button type="submit" id="send" class="primary">Send</button>
    </div>
  </form>
</main>
</div>
<dialog id="invite-dialog" aria-label="Invite someone">
  <form method="dialog" id="invite-form">
    <h2>Invite someone</h2>
    <label>Their name <input id="invite-name" class="field" maxlength="60" required></label>
    <p id="invite-link" class="invite-link"></p>
    <div class="dialog-row"><button type="button" id="invite-make" class="primary">Make a link</button><button value="close">Close</button></div>
  </form>
</dialog>`;
  return shell(assets, "Herald", head, body);
}

/** The login page (the owner's password). */
export function loginPage(assets: WebAssets, error?: string): string {
  const body = `<main class="card">
<h1>Herald</h1>
<form method="post" action="/chat/login">
  <label>Password <input type="password" name="password" autocomplete="current-password" autofocus required></label>
  ${error ? `<p class="error" role="alert">${esc(error)}</p>` : ""}
  <button type="submit" class="primary">Log in</button>
</form>
<p class="muted">The dashboard's password (DASHBOARD_PASSWORD or API_SERVER_KEY). Others join with an invite link.</p>
</main>`;
  return shell(assets, "Log in · Herald", "", body);
}

/** The page an invite link opens: one button that joins. */
export function invitePage(assets: WebAssets, token: string, valid: boolean): string {
  const body = valid
    ? `<main class="card">
<h1>Herald</h1>
<p>You were invited to chat with this assistant.</p>
<form method="post" action="/chat/invite/${esc(token)}"><button type="submit" class="primary">Join</button></form>
</main>`
    : `<main class="card"><h1>Herald</h1><p class="error" role="alert">This invite link is used, expired or wrong. Ask for a new one.</p></main>`;
  return shell(assets, "Invite · Herald", "", body);
}

/** The page of a refused request (login-less mode, off this machine). */
export function refusedPage(assets: WebAssets): string {
  return shell(
    assets,
    "Herald",
    "",
    `<main class="card"><h1>Herald</h1><p class="error" role="alert">The web chat has no login configured, so it answers only on this machine. Fix: set DASHBOARD_PASSWORD (or API_SERVER_KEY) to use it from elsewhere.</p></main>`,
  );
}
