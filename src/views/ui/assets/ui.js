// kstreams-assignor ui: the live page of one group. Plain JavaScript, no library.
// The server sends the whole state once (`snapshot`) and then each change (`update`) as
// server-sent events; EventSource reconnects by itself and the server sends the whole state again.
'use strict';
(function () {
  const CAUSES = {
    memberJoined: 'member joined', memberLeft: 'member left', warmupPromoted: 'warm-up caught up and promoted',
    probingRebalance: 'probing rebalance', loadBalance: 'load balance', topologyChange: 'topology change',
  };
  const ROLE_LETTER = { active: 'A', standby: 'S', warmup: 'W' };
  let state = null;      // the whole state, changes applied
  let selected = null;   // the index of the generation shown, null: the latest (live)
  let serverUp = false;
  let drawn = '';        // what the grid and the timeline were last drawn from

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
  const short = (id) => (id && id.length > 8 ? id.slice(0, 8) : id || '?');
  // A classic member id is `<client id>-StreamThread-<n>-consumer-<uuid>`: its thread and the uuid's start.
  function memberLabel(id) {
    const m = /StreamThread-(\d+)-consumer-(.{0,8})/.exec(id || '');
    return m ? 'thread ' + m[1] + ' · ' + m[2] : short(id);
  }
  const epochOf = (g) => (g ? (g.generationId ?? g.groupEpoch ?? g.epoch ?? null) : null);
  const epochName = () => (state && state.groupType === 'streams' ? 'epoch' : 'generation');
  const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour12: false });
  const num = (n) => Number(n).toLocaleString('en');
  function duration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }
  function taskKey(t) {
    const i = t.lastIndexOf('_');
    const sub = t.slice(0, i), part = Number(t.slice(i + 1));
    return { sub, part };
  }
  function compareTasks(a, b) {
    const x = taskKey(a), y = taskKey(b);
    const sx = Number(x.sub), sy = Number(y.sub);
    if (x.sub !== y.sub) return !isNaN(sx) && !isNaN(sy) ? sx - sy : (x.sub < y.sub ? -1 : 1);
    return x.part - y.part;
  }

  function apply(change) {
    if (change.generation) {
      state.generations.push(change.generation);
      while (state.generations.length > 200) state.generations.shift();
    }
    for (const k of ['live', 'connection', 'summary', 'groupType', 'droppedGenerations']) {
      if (k in change) state[k] = change[k];
    }
  }

  function shown() {
    const gs = state.generations;
    if (selected === null) return gs[gs.length - 1] || null;
    return gs.find((g) => g.index === selected) || gs[gs.length - 1] || null;
  }

  function renderStatus() {
    const c = state.connection || {}, live = state.live;
    let mode = c.state || 'connecting', text;
    if (!serverUp) {
      mode = 'server-lost';
      text = 'no connection to the ui server: reconnecting…';
    } else if (c.state === 'lost') {
      text = (c.unreachable ? 'broker unreachable' : 'group cannot be looked at') + ' since ' + clock(c.sinceMs) + ', the last successful look';
    } else if (c.state === 'connecting' || !live) {
      text = 'looking at the group through ' + state.bootstrap + '…';
    } else {
      if (live.rebalancing) mode = 'rebalancing';
      const e = epochOf(live);
      text = (live.rebalancing ? 'rebalancing' : epochName() + ' ' + (e ?? '?')) + ' · state ' + live.groupState +
        ' · ' + live.members + ' member(s) · last look ' + duration(Date.now() - live.lastLookMs) + ' ago';
    }
    document.body.dataset.connection = mode;
    $('status-text').textContent = text;
    const banner = $('banner');
    banner.className = 'banner';
    if (!serverUp) {
      banner.hidden = false;
      banner.textContent = 'The page lost its connection to kstreams-assignor ui; it reconnects by itself.';
    } else if (c.state === 'lost') {
      banner.hidden = false;
      banner.textContent = (c.unreachable ? 'The broker went away' : 'The group cannot be looked at now') + ' (' + c.error +
        '). Looking again; the grid is the last one seen.';
    } else if (c.state === 'connected' && c.outageMs !== undefined && Date.now() - c.sinceMs < 15000) {
      banner.hidden = false;
      banner.className = 'banner ok';
      banner.textContent = 'Back after ' + duration(c.outageMs) + ': watching again.';
    } else {
      banner.hidden = true;
    }
  }

  function renderGrid(g) {
    const grid = $('grid');
    grid.replaceChildren();
    grid.classList.toggle('stale', !serverUp || (state.connection || {}).state === 'lost');
    const live = selected === null;
    $('live').hidden = live;
    const e = epochOf(g);
    $('grid-title').textContent = g ? 'Assignment, ' + epochName() + ' ' + (e ?? '?') + (live ? ' (live)' : ' at ' + clock(g.atMs)) : 'Assignment';
    document.body.dataset.epoch = e ?? '';
    document.body.dataset.generations = state.generations.length;
    if (!g) {
      $('grid-note').textContent = 'No settled assignment seen yet.';
      return;
    }
    const tasks = [...new Set([...g.tasks, ...g.members.flatMap((m) => [...m.activeTasks, ...m.standbyTasks, ...m.warmupTasks])])].sort(compareTasks);
    const subs = [];
    for (const t of tasks) {
      const s = taskKey(t).sub;
      if (!subs.length || subs[subs.length - 1].sub !== s) subs.push({ sub: s, n: 0 });
      subs[subs.length - 1].n++;
    }
    const warm = {};
    for (const w of (live && state.live ? state.live.warmups : g.warmups) || []) warm[w.processId + ' ' + w.task] = w;
    const movedIn = {};
    for (const m of g.moves || []) if (m.to) movedIn[m.to.processId + ' ' + m.task + ' ' + m.to.role] = m.cause;

    const h1 = el('tr', {}, [el('th', { rowSpan: 2, text: 'process / member', class: 'who' })]);
    for (const s of subs) h1.append(el('th', { colSpan: s.n, text: 'sub-topology ' + s.sub }));
    h1.append(el('th', { colSpan: 3, text: 'tasks' }));
    const h2 = el('tr');
    for (const t of tasks) h2.append(el('th', { text: taskKey(t).part, title: 'task ' + t }));
    for (const r of ['A', 'S', 'W']) h2.append(el('th', { text: r }));
    grid.append(el('thead', {}, [h1, h2]));

    const byProcess = new Map();
    for (const m of g.members) {
      if (!byProcess.has(m.processId)) byProcess.set(m.processId, []);
      byProcess.get(m.processId).push(m);
    }
    const body = el('tbody');
    const copies = Object.fromEntries(tasks.map((t) => [t, { active: 0, standby: 0, warmup: 0 }]));
    for (const [process, members] of [...byProcess.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const count = (k) => members.reduce((n, m) => n + m[k].length, 0);
      body.append(el('tr', { class: 'process' }, [el('th', {
        colSpan: tasks.length + 4, class: 'who', title: process,
        text: 'process ' + short(process) + ' · ' + members.length + ' member(s) · ' + count('activeTasks') + ' active, ' +
          count('standbyTasks') + ' standby, ' + count('warmupTasks') + ' warm-up',
      })]));
      for (const m of members) {
        const row = el('tr', { class: 'member', 'data-member-id': m.memberId, 'data-process-id': process },
          [el('th', { class: 'who mono', text: memberLabel(m.memberId), title: m.memberId })]);
        const role = {};
        for (const [k, r] of [['warmupTasks', 'warmup'], ['standbyTasks', 'standby'], ['activeTasks', 'active']]) for (const t of m[k]) role[t] = r;
        for (const t of tasks) {
          const r = role[t];
          const td = el('td', { 'data-task': t });
          if (r) {
            copies[t][r]++;
            td.dataset.role = r;
            const cell = el('span', { class: 'cell role-' + r, text: ROLE_LETTER[r] });
            let title = 'task ' + t + ': ' + r + ' on member ' + m.memberId;
            const cause = movedIn[process + ' ' + t + ' ' + r];
            if (cause) {
              cell.classList.add('moved');
              title += ' (moved here: ' + (CAUSES[cause] || cause) + ')';
            }
            const w = warm[process + ' ' + t];
            if (r === 'warmup' && w) {
              const fill = el('i', { class: 'fill' });
              fill.style.width = Math.round((w.progress ?? 0) * 100) + '%';
              cell.append(fill);
              title += ' · ' + warmupFigures(w);
            }
            cell.title = title;
            td.append(cell);
          }
          row.append(td);
        }
        for (const k of ['activeTasks', 'standbyTasks', 'warmupTasks']) row.append(el('td', { class: 'total', text: m[k].length }));
        body.append(row);
      }
    }
    grid.append(body);
    const foot = el('tr', {}, [el('th', { class: 'who', text: 'copies (A+S+W)' })]);
    let missing = 0;
    for (const t of tasks) {
      const c = copies[t];
      if (c.active === 0) missing++;
      foot.append(el('td', { title: 'task ' + t + ': ' + c.active + ' active, ' + c.standby + ' standby, ' + c.warmup + ' warm-up' },
        [c.active === 0 ? el('span', { class: 'cell missing', text: '!' }) : String(c.active + c.standby + c.warmup)]));
    }
    const sum = (k) => g.members.reduce((n, m) => n + m[k].length, 0);
    for (const k of ['activeTasks', 'standbyTasks', 'warmupTasks']) foot.append(el('td', { class: 'total', text: sum(k) }));
    grid.append(el('tfoot', {}, [foot]));
    $('grid-note').textContent = tasks.length + ' task(s) in ' + subs.length + ' sub-topolog' + (subs.length === 1 ? 'y' : 'ies') + ', ' +
      byProcess.size + ' process(es), ' + g.members.length + ' member(s)' + (missing ? '; ' + missing + ' task(s) without an active copy' : '') +
      (g.replay ? '; replay ' + (g.replay.error ? 'failed: ' + g.replay.error : (g.replay.processesAgreeing === g.replay.processes &&
        g.replay.tasksAgreeing === g.replay.tasks ? 'agrees' : 'differs') + ' (' + g.replay.assignor + ')') : '');
    renderChanges(g);
  }

  function side(r) { return r ? short(r.processId) + ' ' + (r.role === 'warmup' ? 'warm-up' : r.role) : '–'; }

  function renderChanges(g) {
    const box = $('changes');
    box.replaceChildren();
    // By process: a classic process has a member per stream thread, and they come and go together.
    const names = (list) => {
      const by = new Map();
      for (const m of list) by.set(m.processId, [...(by.get(m.processId) || []), m.memberId]);
      return [...by.entries()].map(([p, ms]) => short(p) + ' (' + (ms.length === 1 ? memberLabel(ms[0]) : ms.length + ' members') + ')').join(', ');
    };
    const parts = [];
    if (g.first) parts.push('First look: nothing to compare with.');
    if (g.joined.length) parts.push('Joined: ' + names(g.joined) + '.');
    if (g.left.length) parts.push('Left: ' + names(g.left) + '.');
    if (!g.first) parts.push(g.moves.length ? g.moves.length + ' move(s):' : 'No task moved.');
    box.append(el('p', { text: parts.join(' ') }));
    if (!g.moves.length) return;
    const rows = g.moves.map((m) => el('tr', {}, [el('td', { class: 'mono', text: m.task }), el('td', { text: side(m.from) }),
      el('td', { text: side(m.to) }), el('td', { text: CAUSES[m.cause] || m.cause })]));
    box.append(el('table', {}, [el('thead', {}, [el('tr', {}, ['task', 'from', 'to', 'cause'].map((t) => el('th', { text: t })))]),
      el('tbody', {}, rows)]));
  }

  function warmupFigures(w) {
    const f = [];
    f.push(w.lag === null ? 'lag unknown' : 'lag ' + num(w.lag));
    if (w.restoreRate !== null) f.push(num(Math.round(w.restoreRate)) + '/s');
    if (w.caughtUp) f.push('caught up');
    else if (w.etaMs !== null) f.push('catch-up in ~' + duration(w.etaMs));
    return f.join(' · ');
  }

  function renderWarmups(g) {
    const box = $('warmups');
    box.replaceChildren();
    const list = (selected === null && state.live ? state.live.warmups : g && g.warmups) || [];
    if (!list.length) {
      box.append(el('p', { class: 'note', text: 'No warm-up' + (selected === null ? ' now.' : ' in this generation.') }));
      return;
    }
    for (const w of list) {
      const bar = el('i');
      bar.style.width = Math.round((w.progress ?? 0) * 100) + '%';
      box.append(el('div', { class: 'warmup', 'data-task': w.task }, [
        el('div', {}, [el('b', { class: 'mono', text: w.task }), ' on ', el('span', { class: 'mono', text: short(w.processId), title: w.processId }),
          w.role === 'standby' ? ' (a standby that lags)' : '']),
        el('div', { class: 'progress', title: w.progress === null ? 'progress unknown' : Math.round(w.progress * 100) + '% restored' }, [bar]),
        el('div', { class: 'figures', text: warmupFigures(w) }),
      ]));
    }
    box.append(el('p', { class: 'note', text: 'Caught up at a lag of ' + num(state.acceptableRecoveryLag) + ' (acceptable.recovery.lag).' }));
  }

  function renderRecord() {
    const box = $('record');
    box.replaceChildren();
    const size = state.live && state.live.groupRecordSize;
    if (!size) {
      box.append(el('p', { class: 'note', text: state.groupType === 'streams'
        ? 'A streams group keeps no single metadata record: the coordinator writes a record per member.' : 'Not seen yet.' }));
      return;
    }
    const f = size.totalBytes / Math.max(1, size.limitBytes);
    const bar = el('i');
    bar.style.width = Math.min(100, f * 100).toFixed(1) + '%';
    box.append(el('div', { class: 'progress record' + (f > 0.8 ? ' over' : f > 0.5 ? ' high' : '') }, [bar]));
    box.append(el('div', { text: num(size.totalBytes) + ' of ' + num(size.limitBytes) + ' bytes (' + (f * 100).toFixed(1) + ' %)' }));
    const big = size.members.reduce((a, m) => (!a || m.recordBytes > a.recordBytes ? m : a), null);
    box.append(el('p', { class: 'note', text: (size.limitIsDefault ? 'Limit: message.max.bytes default (not read from the broker).'
      : 'Limit: the broker\'s max.message.bytes.') + (big ? ' Largest member: ' + memberLabel(big.memberId) + ', ' + num(big.recordBytes) + ' bytes.' : '') +
      ' Above the limit every SyncGroup fails and the group rebalances without end.' }));
  }

  function renderTimeline() {
    const box = $('timeline');
    box.replaceChildren();
    const current = shown();
    for (const g of [...state.generations].reverse()) {
      const causes = {};
      for (const m of g.moves) causes[m.cause] = (causes[m.cause] || 0) + 1;
      const chips = [];
      if (g.first) chips.push(el('span', { class: 'chip', text: 'first look' }));
      if (g.joined.length) chips.push(el('span', { class: 'chip join', text: '+' + g.joined.length + ' joined' }));
      if (g.left.length) chips.push(el('span', { class: 'chip leave', text: '−' + g.left.length + ' left' }));
      for (const [c, n] of Object.entries(causes)) chips.push(el('span', { class: 'chip move', text: n + ' moved: ' + (CAUSES[c] || c) }));
      if (!g.first && !g.moves.length) chips.push(el('span', { class: 'chip', text: 'no move' }));
      const li = el('li', { class: g === current ? 'selected' : '', 'data-index': g.index, tabIndex: 0 }, [
        el('div', {}, [el('b', { text: epochName() + ' ' + (epochOf(g) ?? '?') }), ' ',
          el('span', { class: 'when', text: clock(g.atMs) + ' · ' + g.processes + ' process(es), ' + g.members.length + ' member(s)' })]),
        el('div', {}, chips),
      ]);
      const choose = () => {
        const latest = state.generations[state.generations.length - 1];
        selected = latest && g.index === latest.index ? null : g.index;
        render();
      };
      li.addEventListener('click', choose);
      li.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); choose(); } });
      box.append(li);
    }
    if (state.droppedGenerations) box.append(el('li', { class: 'note', text: state.droppedGenerations + ' older generation(s) not kept' }));
  }

  function render() {
    if (!state) return;
    $('group').textContent = state.groupId;
    $('kind').textContent = state.groupType ? state.groupType + ' group' : '';
    document.title = state.groupId + ' · kstreams-assignor ui';
    const g = shown();
    renderStatus();
    // A look that changed nothing but its clock leaves the grid (of a large group, many cells) as it is.
    const key = JSON.stringify([g && g.index, selected, state.generations.length, serverUp, (state.connection || {}).state,
      selected === null && state.live ? state.live.warmups : null]);
    if (key !== drawn) {
      drawn = key;
      renderGrid(g);
      renderTimeline();
    }
    renderWarmups(g);
    renderRecord();
    const s = state.summary || {};
    const moves = Object.values(s.movesByCause || {}).reduce((a, b) => a + b, 0);
    $('summary').textContent = (s.looks || 0) + ' look(s), ' + (s.generations || 0) + ' generation(s), ' + moves + ' move(s) since start';
  }

  $('live').addEventListener('click', () => { selected = null; render(); });
  const source = new EventSource('events');
  source.addEventListener('snapshot', (e) => { serverUp = true; state = JSON.parse(e.data); render(); });
  source.addEventListener('update', (e) => { if (state) { apply(JSON.parse(e.data)); render(); } });
  source.addEventListener('open', () => { serverUp = true; if (state) render(); });
  source.addEventListener('error', () => { serverUp = false; if (state) render(); });
  setInterval(() => { if (state) renderStatus(); }, 1000);
})();
