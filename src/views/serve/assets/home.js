// kstreams-assignor serve: the home page, a row per Kafka Streams group. Plain JavaScript, no
// library. The server sends the whole list once (`snapshot`), then each row set or removed
// (`update`) as server-sent events; EventSource reconnects by itself.
'use strict';
(function () {
  const CAUSES = {
    member_joined: 'member joined', member_left: 'member left', warmup_promoted: 'warm-up caught up and promoted',
    probing_rebalance: 'probing rebalance', load_balance: 'load balance', topology_change: 'topology change', none: 'no task moved',
  };
  let state = null;
  let serverUp = false;
  const $ = (id) => document.getElementById(id);
  function el(tag, props, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else if (k.startsWith('data-')) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children || []) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });
  const num = (n) => (n === undefined || n === null ? '–' : Number(n).toLocaleString('en'));
  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }

  function apply(change) {
    if (change.set) {
      const i = state.groups.findIndex((g) => g.group === change.set.group);
      if (i >= 0) state.groups[i] = change.set; else state.groups.push(change.set);
      state.groups.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
    }
    if ('remove' in change) state.groups = state.groups.filter((g) => g.group !== change.remove);
    if (change.cluster) state.cluster = change.cluster;
  }

  function warmups(g) {
    const ws = g.warmups || [];
    if (!ws.length) return '–';
    return el('div', { class: 'warmups' }, ws.map((w) => el('div', {
      text: w.task + ' on ' + (w.processId || '?').slice(0, 8) + ': lag ' + num(w.lag) +
        (w.caughtUp ? ', caught up' : w.etaMs !== null && w.etaMs !== undefined ? ', ~' + duration(w.etaMs) : ''),
    })));
  }

  function row(g) {
    const looked = g.groupState !== undefined;
    const missing = (g.withoutActive || []).length;
    const cls = g.error || missing ? 'bad' : looked && g.groupState !== 'Stable' ? 'unsettled' : '';
    const r = g.lastRebalance;
    return el('tr', { class: cls, 'data-group': g.group, 'data-state': g.groupState || '', 'data-members': looked ? g.members : '' }, [
      el('td', {}, [el('a', { href: g.path, text: g.group })]),
      el('td', { text: g.groupType }),
      el('td', { text: g.error ? 'look failed: ' + g.error : looked ? g.groupState : 'not looked at yet' }),
      el('td', { class: 'num', text: num(g.epoch) }),
      el('td', { class: 'num', text: looked ? num(g.members) : '–' }),
      el('td', { class: 'num', text: looked ? num(g.processes) : '–' }),
      el('td', { class: 'num', text: looked ? num(g.activeTasks) + ' / ' + num(g.standbyTasks) + ' / ' + num(g.warmupTasks) : '–' }),
      el('td', { class: 'num' + (missing ? ' missing' : ''), text: looked ? String(missing) : '–', title: (g.withoutActive || []).join(' ') }),
      el('td', {}, [warmups(g)]),
      el('td', { text: r ? clock(r.atMs) + ' · ' + (CAUSES[r.cause] || r.cause) : '–' }),
    ]);
  }

  function render() {
    if (!state) return;
    $('bootstrap').textContent = 'through ' + state.bootstrap;
    const body = $('groups').tBodies[0];
    body.replaceChildren(...state.groups.map(row));
    $('empty').hidden = state.groups.length > 0;
    document.body.dataset.groups = state.groups.length;
    const c = state.cluster || {};
    let mode = c.state || 'connecting', text;
    if (!serverUp) { mode = 'server-lost'; text = 'no connection to the server: reconnecting…'; }
    else if (c.state === 'lost') text = 'cluster unreachable since ' + clock(c.sinceMs) + ': ' + c.error;
    else if (c.state === 'connected') text = state.groups.length + ' group(s)';
    else text = 'looking for groups…';
    document.body.dataset.connection = mode;
    $('status-text').textContent = text;
    const banner = $('banner');
    banner.hidden = serverUp && c.state !== 'lost';
    banner.textContent = !serverUp ? 'The page lost its connection to kstreams-assignor serve; it reconnects by itself.'
      : 'The cluster cannot be reached (' + c.error + '); the rows are the last ones seen.';
  }

  const source = new EventSource('events');
  source.addEventListener('snapshot', (e) => { serverUp = true; state = JSON.parse(e.data); render(); });
  source.addEventListener('update', (e) => { if (state) { apply(JSON.parse(e.data)); render(); } });
  source.addEventListener('open', () => { serverUp = true; if (state) render(); });
  source.addEventListener('error', () => { serverUp = false; if (state) render(); });
})();
