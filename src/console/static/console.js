// The sless console's one script (no build step). Everything works without it (forms post and
// redirect back, times show in UTC); it adds: copy buttons, times as "3 min ago", and live parts
// ([data-live] with an id) that refresh themselves from the same URL every data-refresh-ms while
// the tab is visible, replaced only when the server's HTML for them changed, announcing phase
// changes to screen readers.
(function () {
  'use strict';
  var announcer = document.getElementById('announcer');
  function announce(text) {
    if (!announcer) return;
    announcer.textContent = '';
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button.copy[data-copy]');
    if (!button) return;
    var value = button.getAttribute('data-copy');
    var done = function () {
      var label = button.textContent;
      button.textContent = 'Copied';
      announce('Copied ' + value);
      window.setTimeout(function () { button.textContent = label; }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(value).then(done, function () { announce('Copy failed: select the URL and copy it'); });
    } else {
      announce('Copy is not available here: select the URL and copy it');
    }
  });

  function relative(ms) {
    var abs = Math.abs(ms);
    if (abs < 1000) return 'just now';
    var n, unit;
    if (abs < 45000) { n = Math.round(abs / 1000); unit = 's'; }
    else if (abs < 2700000) { n = Math.round(abs / 60000); unit = 'min'; }
    else if (abs < 129600000) { n = Math.round(abs / 3600000); unit = 'h'; }
    else { n = Math.round(abs / 86400000); unit = 'd'; }
    return ms < 0 ? n + ' ' + unit + ' ago' : 'in ' + n + ' ' + unit;
  }
  function relativeTimes(root) {
    root.querySelectorAll('time[datetime][data-relative]').forEach(function (el) {
      var t = Date.parse(el.getAttribute('datetime'));
      if (!isNaN(t)) el.textContent = relative(t - Date.now());
    });
  }
  relativeTimes(document);
  window.setInterval(function () { relativeTimes(document); }, 15000);

  function phases(root) {
    var out = {};
    root.querySelectorAll('[data-fn] [data-phase], #summary [data-phase]').forEach(function (el) {
      var row = el.closest('[data-fn]');
      var name = row ? row.getAttribute('data-fn') : (document.querySelector('h1') || {}).textContent;
      out[name] = el.getAttribute('data-phase');
    });
    return out;
  }

  // The Logs tab: new lines over server-sent events, and the stream and replica filters.
  var logList = document.getElementById('log-lines');
  if (logList && window.EventSource) {
    var MAX_LINES = 2000;
    var streamFilter = document.getElementById('stream-filter');
    var replicaFilter = document.getElementById('replica-filter');
    var state = document.getElementById('tail-state');
    var wrap = logList.parentElement;
    var shown = function (li) {
      return (!streamFilter.value || li.getAttribute('data-stream') === streamFilter.value) &&
        (!replicaFilter.value || li.getAttribute('data-replica') === replicaFilter.value);
    };
    var filter = function () {
      Array.prototype.forEach.call(logList.children, function (li) { li.hidden = !shown(li); });
    };
    streamFilter.addEventListener('change', filter);
    replicaFilter.addEventListener('change', filter);
    var knownReplicas = {};
    Array.prototype.forEach.call(replicaFilter.options, function (o) { knownReplicas[o.value] = true; });
    var span = function (cls, text) { var s = document.createElement('span'); s.className = cls; s.textContent = text; return s; };
    var events = new EventSource(logList.getAttribute('data-events'));
    events.onopen = function () { state.textContent = 'following new lines'; };
    events.onerror = function () { state.textContent = 'the live tail was interrupted; reconnecting'; };
    events.addEventListener('failed', function (e) { state.textContent = 'the live tail failed: ' + JSON.parse(e.data).error; });
    events.onmessage = function (e) {
      var l = JSON.parse(e.data);
      var atBottom = wrap.scrollTop + wrap.clientHeight >= wrap.scrollHeight - 4;
      var li = document.createElement('li');
      li.setAttribute('data-stream', l.stream);
      li.setAttribute('data-replica', l.replica);
      var time = document.createElement('time');
      time.setAttribute('datetime', l.time);
      time.textContent = l.time.slice(11, 23);
      var code = document.createElement('code');
      code.textContent = l.line;
      li.append(time, ' ', span('replica', l.replica), ' ', span('stream-' + l.stream, l.stream), ' ', code);
      li.hidden = !shown(li);
      logList.appendChild(li);
      while (logList.children.length > MAX_LINES) logList.removeChild(logList.firstChild);
      if (!knownReplicas[l.replica]) {
        knownReplicas[l.replica] = true;
        var option = document.createElement('option');
        option.value = l.replica;
        option.textContent = l.replica;
        replicaFilter.appendChild(option);
      }
      var none = document.getElementById('no-lines');
      if (none) none.remove();
      if (atBottom) wrap.scrollTop = wrap.scrollHeight;
    };
  }

  var body = document.body;
  var interval = Number(body.getAttribute('data-refresh-ms'));
  if (!interval || !window.fetch || !window.DOMParser) return;
  var timer;
  var etag = null;
  // The server's HTML of each live part as last seen, so times made relative here are no change.
  var served = {};
  document.querySelectorAll('[data-live][id]').forEach(function (el) { served[el.id] = el.innerHTML; });
  function schedule(ms) {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, ms);
  }
  function refresh() {
    if (document.hidden) return schedule(interval);
    var headers = { accept: 'text/html' };
    if (etag) headers['if-none-match'] = etag;
    window.fetch(window.location.href, { headers: headers, credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 401) {
          announce('Your session has ended: reload the page to log in again');
          return null;
        }
        if (res.status === 304 || !res.ok) return '';
        etag = res.headers.get('etag');
        return res.text();
      })
      .then(function (html) {
        if (html === null) return;
        if (html) apply(new DOMParser().parseFromString(html, 'text/html'));
        schedule(interval);
      })
      .catch(function () { schedule(interval * 2); });
  }
  function apply(next) {
    var before = phases(document);
    next.querySelectorAll('[data-live][id]').forEach(function (fresh) {
      var current = document.getElementById(fresh.id);
      if (!current || served[fresh.id] === fresh.innerHTML) return;
      served[fresh.id] = fresh.innerHTML;
      // Keep the keyboard where it was: a focused control inside is found again by its name.
      var focused = current.contains(document.activeElement) ? document.activeElement : null;
      var key = focused && (focused.getAttribute('aria-label') || focused.id);
      current.innerHTML = fresh.innerHTML;
      relativeTimes(current);
      if (key) {
        var again = Array.prototype.find.call(current.querySelectorAll('a, button, [tabindex]'), function (el) {
          return (el.getAttribute('aria-label') || el.id) === key;
        });
        if (again) again.focus();
      }
    });
    var nextInterval = Number(next.body.getAttribute('data-refresh-ms'));
    if (nextInterval) { interval = nextInterval; body.setAttribute('data-refresh-ms', String(nextInterval)); }
    var after = phases(document);
    var changes = Object.keys(after).filter(function (k) { return before[k] && before[k] !== after[k]; });
    if (changes.length > 0) {
      announce(changes.slice(0, 5).map(function (k) { return k + ' is ' + after[k]; }).join('; '));
    }
  }
  document.addEventListener('visibilitychange', function () { if (!document.hidden) schedule(200); });
  schedule(interval);
})();
