/**
 * Result payloads in each provider's real response shape (fields as the APIs document and send them,
 * values scrubbed and made up). Each builder takes the query so a test can see it came back.
 */

const PAGES = [
  {
    host: "nodejs.org",
    path: "/api/http.html",
    title: "HTTP | Node.js Documentation",
    text: "The HTTP interfaces in Node.js are designed to support many features of the protocol",
  },
  {
    host: "developer.mozilla.org",
    path: "/en-US/docs/Web/HTTP",
    title: "HTTP - MDN Web Docs",
    text: "Hypertext Transfer Protocol (HTTP) is an application-layer protocol for transmitting hypermedia documents",
  },
  {
    host: "en.wikipedia.org",
    path: "/wiki/HTTP",
    title: "HTTP - Wikipedia",
    text: "HTTP is an application layer protocol in the Internet protocol suite model for distributed, collaborative, hypermedia information systems",
  },
  {
    host: "www.rfc-editor.org",
    path: "/rfc/rfc9110",
    title: "RFC 9110: HTTP Semantics",
    text: "The Hypertext Transfer Protocol (HTTP) is a stateless application-level protocol for distributed, collaborative, hypertext information systems",
  },
  {
    host: "web.dev",
    path: "/articles/http-cache",
    title: "Prevent unnecessary network requests with the HTTP Cache",
    text: "Fetching resources over the network is both slow and expensive",
  },
  {
    host: "github.com",
    path: "/nodejs/undici",
    title: "nodejs/undici: An HTTP/1.1 client, written from scratch for Node.js",
    text: "An HTTP/1.1 client, written from scratch for Node.js",
  },
  {
    host: "stackoverflow.com",
    path: "/questions/tagged/http",
    title: "Newest 'http' Questions - Stack Overflow",
    text: "Questions tagged http on Stack Overflow",
  },
  {
    host: "httpwg.org",
    path: "/specs/",
    title: "HTTP Working Group Specifications",
    text: "These are the specifications published by the IETF HTTP Working Group",
  },
] as const;

/** GET /search?format=json of SearXNG: up to 8 results, `content` plain text. */
export function searxngBody(query: string) {
  return {
    query,
    number_of_results: 0,
    results: PAGES.map((p, i) => ({
      url: `https://${p.host}${p.path}`,
      title: p.title,
      content: `${p.text} — about ${query}.`,
      publishedDate: null,
      thumbnail: "",
      engine: i % 2 ? "bing" : "duckduckgo",
      template: "default.html",
      parsed_url: ["https", p.host, p.path, "", "", ""],
      img_src: "",
      priority: "",
      engines: i % 2 ? ["bing", "duckduckgo"] : ["duckduckgo"],
      positions: [i + 1],
      score: 8 / (i + 1),
      category: "general",
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [`${query} tutorial`],
    unresponsive_engines: [["google", "timeout"]],
  };
}

/** GET /res/v1/web/search of Brave: `count` results, `description` with <strong> highlighting. */
export function braveBody(query: string, count: number) {
  return {
    query: {
      original: query,
      show_strict_warning: false,
      is_navigational: false,
      country: "us",
      more_results_available: true,
    },
    mixed: {
      type: "mixed",
      main: PAGES.slice(0, count).map((_, i) => ({ type: "web", index: i, all: false })),
      top: [],
      side: [],
    },
    type: "search",
    web: {
      type: "search",
      results: PAGES.slice(0, count).map((p) => ({
        title: p.title,
        url: `https://${p.host}${p.path}`,
        is_source_local: false,
        is_source_both: false,
        description: `${p.text} &amp; more on <strong>${query}</strong>.`,
        profile: {
          name: p.host,
          url: `https://${p.host}${p.path}`,
          long_name: p.host,
          img: "https://imgs.search.brave.com/x.png",
        },
        language: "en",
        family_friendly: true,
        type: "search_result",
        subtype: "generic",
        meta_url: {
          scheme: "https",
          netloc: p.host,
          hostname: p.host,
          favicon: "https://imgs.search.brave.com/f.png",
          path: p.path,
        },
      })),
      family_friendly: true,
    },
  };
}

/** Brave's answer when nothing matched: no `web` key at all. */
export function braveEmptyBody(query: string) {
  return {
    query: { original: query, more_results_available: false },
    mixed: { type: "mixed", main: [], top: [], side: [] },
    type: "search",
  };
}

/** Brave's error envelope (401 SUBSCRIPTION_TOKEN_INVALID, 429 RATE_LIMITED, 422 VALIDATION). */
export function braveError(status: number, code: string, detail: string) {
  return {
    type: "ErrorResponse",
    error: {
      id: "8e1c2b8a-0000-4000-8000-000000000000",
      status,
      code,
      detail,
      meta: { component: "authentication" },
    },
    time: 1732442400,
  };
}

/** POST /search of Tavily: `max_results` results with a relevance `score`. */
export function tavilyBody(query: string, maxResults: number) {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: PAGES.slice(0, maxResults).map((p, i) => ({
      title: p.title,
      url: `https://${p.host}${p.path}`,
      content: `${p.text}. Related to ${query}.`,
      score: Math.round((0.95 - i * 0.07) * 1000) / 1000,
      raw_content: null,
    })),
    response_time: 1.09,
    request_id: "123e4567-e89b-12d3-a456-426614174111",
  };
}
