/**
 * The dashboard's one stylesheet and one script, served from memory (no build step, no CDN). The script
 * only adds live updates (SSE) and confirmations; every page works without it.
 */

/** `GET /dashboard/assets/app.css`. */
export const CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#5c6670;--line:#d6dbe0;--accent:#0b5cad;--bad:#b3261e;--ok:#1e7b34;--card:#f5f7f9}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ec;--bg:#14171a;--muted:#9aa4ad;--line:#2e353b;--accent:#6cb2ff;--bad:#ff8a80;--ok:#7bd88f;--card:#1c2024}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:2}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.6rem 1rem;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem .9rem;list-style:none;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700;text-decoration:none}
header form{margin-left:auto}
main{max-width:1100px;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}
.card .n{font-size:1.6rem;font-weight:700}
.muted{color:var(--muted)}.bad{color:var(--bad)}.ok{color:var(--ok)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td{overflow-wrap:anywhere}
dl.cards dd{margin:0}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}
th{font-size:.85rem;color:var(--muted);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th.num{text-align:right}
th[scope=row]{color:var(--fg);font-size:1rem}
form.inline{display:inline}
button,.button{font:inherit;padding:.35rem .8rem;border:1px solid var(--accent);border-radius:6px;background:var(--accent);color:var(--bg);cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:transparent;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
input,textarea,select{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);max-width:100%}
textarea{width:100%;min-height:16rem;font-family:ui-monospace,monospace;font-size:.9rem}
label{display:block;font-weight:600;margin:.5rem 0 .2rem}
.search{display:flex;gap:.5rem;flex-wrap:wrap;align-items:end;margin-bottom:1rem}
.msg{border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;margin:.5rem 0;overflow-wrap:anywhere}
.msg header{border:0;padding:0 0 .25rem;font-size:.85rem;color:var(--muted)}
.msg.user{background:var(--card)}
.msg pre,pre{white-space:pre-wrap;margin:.25rem 0;font-size:.9rem}
details{margin:.25rem 0}
.flash{padding:.5rem .75rem;border-radius:6px;border:1px solid var(--line);margin-bottom:1rem}
.flash.error{border-color:var(--bad);color:var(--bad)}
.chart{margin:0}.chart svg{width:100%;height:120px;background:var(--card);border-radius:6px}
.chart rect{fill:var(--accent)}.chart .axis{stroke:var(--line)}
.chart figcaption{font-size:.9rem;margin-top:.25rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:1rem}
mark{background:#ffe58a;color:#000}
.login{max-width:22rem;margin:3rem auto}
.live{font-size:.85rem}
@media (max-width:600px){th.opt,td.opt{display:none}main{padding:.6rem}}
`;

/** `GET /dashboard/assets/app.js`. */
export const JS = `
(function(){
  document.addEventListener('submit',function(e){
    var f=e.target;var q=f.getAttribute('data-confirm');
    if(q&&!window.confirm(q)){e.preventDefault();}
  });
  var live=document.querySelector('[data-live]');
  if(!live||!window.EventSource)return;
  var status=document.getElementById('live-status');
  var pending=false,deferred=false;
  // Never replace what someone is typing in or has focused (keyboard users keep their place).
  live.addEventListener('focusout',function(e){
    if(deferred&&!live.contains(e.relatedTarget)){deferred=false;refresh();}
  });
  // At most one refresh a second, however busy the gateway is.
  var last=0,timer=null;
  function refresh(){
    if(live.contains(document.activeElement)){deferred=true;return;}
    if(pending||timer)return;
    var wait=last+1000-Date.now();
    if(wait>0){timer=setTimeout(function(){timer=null;refresh();},wait);return;}
    last=Date.now();pending=true;
    var url=new URL(window.location.href);url.searchParams.set('fragment','1');
    fetch(url,{credentials:'same-origin'}).then(function(r){return r.ok?r.text():null}).then(function(t){
      pending=false;if(t!==null){live.innerHTML=t;}
    },function(){pending=false;});
  }
  var es=new EventSource('/dashboard/events');
  es.addEventListener('open',function(){if(status)status.textContent='live';});
  es.addEventListener('error',function(){if(status)status.textContent='reconnecting…';});
  ['turn-finished','turn-started','error','changed'].forEach(function(name){
    es.addEventListener(name,function(){refresh();});
  });
})();
`;
