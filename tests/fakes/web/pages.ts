/** Real-looking pages for the fake web server: site chrome (nav, ads, cookie banner, footer) around content. */

const NAV = `<header class="site-header">
  <a class="logo" href="/">The Daily Packet</a>
  <nav class="main-nav" aria-label="Main"><ul>
    <li><a href="/world">World</a></li><li><a href="/tech">Technology</a></li><li><a href="/science">Science</a></li>
    <li><a href="/opinion">Opinion</a></li><li><a href="/subscribe">Subscribe for $1</a></li>
  </ul></nav>
</header>`;

const FOOTER = `<footer class="site-footer">
  <nav aria-label="Footer"><a href="/about">About us</a> · <a href="/privacy">Privacy policy</a> · <a href="/careers">Careers</a></nav>
  <p>© 2026 The Daily Packet Media Group. All rights reserved. NEWSLETTER-FOOTER-MARKER</p>
</footer>`;

const AD = `<div class="ad-slot advertisement" id="ad-top"><span>Advertisement</span>
  <a href="https://ads.example.net/click?id=42"><img src="https://ads.example.net/banner.gif" alt="Buy cheap servers now"></a>
  <p>SPONSORED-AD-MARKER: Cloud hosting from $2/month — click here!</p></div>`;

const SIDEBAR = `<aside class="sidebar"><h3>Most read</h3><ol>
  <li><a href="/a/1">Ten gadgets you need this winter</a></li><li><a href="/a/2">Celebrity chef opens a new bistro</a></li>
  <li><a href="/a/3">Markets rally on Friday</a></li></ol></aside>`;

const PARAGRAPHS = [
  "Engineers at a regional internet exchange spent most of Tuesday tracing an outage that, for a few hours, made a handful of popular services unreachable for customers of three smaller carriers.",
  "The root cause, according to the exchange's incident report, was a route filter that had been updated by hand during a maintenance window and silently accepted a prefix it should have rejected.",
  "Operators have argued for years that such filters should be generated from registry data rather than edited directly. The exchange says it will now build every filter from its IRR records and review the diff before deployment.",
  "“Nothing about this was exotic,” said the exchange's head of operations. “It was a typo in a file that a machine should have written.” She added that the team had rehearsed the rollback the previous month, which is why recovery took minutes once the cause was known.",
];

/** The article page: readability must keep the article and drop the nav, ads, sidebar and footer. */
export function articlePage(): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>How a typo in a route filter took down an exchange | The Daily Packet</title>
<meta property="og:title" content="How a typo in a route filter took down an exchange">
<link rel="stylesheet" href="/static/site.css"><style>body{font-family:Georgia,serif}.ad-slot{height:250px}</style>
<script>window.dataLayer=[];function track(){console.log("TRACKING-SCRIPT-MARKER")}</script>
</head><body>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. <button>Accept all</button></div>
${NAV}
${AD}
<div class="layout"><main id="content">
<article class="story">
  <h1>How a typo in a route filter took down an exchange</h1>
  <p class="byline">By <a href="/authors/jane-doe">Jane Doe</a> · 24 November 2026</p>
  ${PARAGRAPHS.slice(0, 2)
    .map((p) => `<p>${p}</p>`)
    .join("\n  ")}
  <h2>What changed</h2>
  <p>The fix is three steps, which the report lists in order of cost:</p>
  <ul><li>Generate filters from registry data</li><li>Review every diff before deployment</li><li>Alert on prefixes that appear without a matching route object</li></ul>
  ${PARAGRAPHS.slice(2)
    .map((p) => `<p>${p}</p>`)
    .join("\n  ")}
  <p>The filter line that caused it, as quoted in the report (see <a href="/reports/2026-11-ix.pdf">the full report</a>):</p>
  <pre><code>ip prefix-list CUSTOMER-IN seq 40 permit 203.0.113.0/24 le 32</code></pre>
</article>
${AD.replace("ad-top", "ad-mid")}
</main>${SIDEBAR}</div>
${FOOTER}
<script src="https://tracker.example.net/t.js"></script>
</body></html>`;
}

/** A page that is not an article (a status board: a table and short lines), inside the same chrome. */
export function hubPage(): string {
  const rows = ["API", "Dashboard", "Webhooks", "Search index", "Billing"]
    .map(
      (name, i) =>
        `<tr><td><a href="/status/${name.toLowerCase().replace(" ", "-")}">${name}</a></td><td>${i === 3 ? "Degraded" : "Operational"}</td></tr>`,
    )
    .join("");
  return `<!DOCTYPE html><html><head><title>Status</title></head><body>${NAV}
<main><h1>System status</h1><p>HUB-BODY-MARKER Updated 2 minutes ago.</p>
<table><thead><tr><th>Component</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>
<p><a href="/status/history">Incident history</a></p></main>
<script>console.log("HUB-SCRIPT-MARKER")</script>${FOOTER}</body></html>`;
}

/** A long article, `paragraphs` paragraphs long, for the maxChars cap. */
export function longPage(paragraphs: number): string {
  const body = Array.from(
    { length: paragraphs },
    (_, i) => `<p>Paragraph ${i + 1}. ${PARAGRAPHS[i % PARAGRAPHS.length]}</p>`,
  );
  return `<!DOCTYPE html><html><head><title>A long read</title></head><body>${NAV}<article><h1>A long read</h1>${body.join("\n")}</article>${FOOTER}</body></html>`;
}

/** A 1×1 transparent PNG. */
export const PNG_BYTES = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/** A minimal one-page PDF ("Hello PDF"). */
export const PDF_BYTES = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
    "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj\n" +
    "4 0 obj<</Length 41>>stream\nBT /F1 12 Tf 20 50 Td (Hello PDF) Tj ET\nendstream endobj\n" +
    "5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
  "latin1",
);
