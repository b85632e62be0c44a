// The text of /ui/page.js, compiled into the daemon: the page needs no files beside the binary.

extension WebPageAsset {
    /// The page's script: it reads the schema, subscribes with the client and keeps the table.
    static let script = WebPageAsset(
        path: "/ui/page.js", contentType: "text/javascript; charset=utf-8",
        text: #"""
            // The live page of `rill serve` (Documentation/Protocol.md, "The web page"): an entity, a query,
            // its results as a table that follows every commit, and a slider back through the log.
            import { history, query, schema, subscribe } from './rill.js';

            const $ = (id) => document.getElementById(id);
            const form = $('form');
            const entityField = $('entity');
            const queryField = $('query');
            const tokenField = $('token');
            const stateLabel = $('state');
            const seqLabel = $('seq');
            const slider = $('slider');
            const whenLabel = $('when');
            const message = $('message');
            const table = $('results');
            const countLabel = $('count');

            // Settings from the page's address, `#token=…&entity=…&q=…` (the fragment never reaches a server)
            // or its query string.
            const fragment = new URLSearchParams(location.hash.slice(1));
            const search = new URLSearchParams(location.search);
            const setting = (name) => fragment.get(name) ?? search.get(name);
            tokenField.value = setting('token') ?? '';
            queryField.value = setting('q') ?? '';
            const progress = setting('progress') ?? '1';

            let entities = [];
            let subscription = null;
            let columns = [];
            // The rows of the live table, one `tr` per record of `subscription.records`, in order.
            let rows = [];
            // 'live', or the commit the table shows the results as of.
            let view = 'live';
            let pastRequest = 0;

            const options = () => ({ token: tokenField.value });

            function showMessage(text) {
              message.textContent = text;
              message.hidden = !text;
            }

            function showState(state, live) {
              const words = {
                connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', closed: 'not connected', failed: 'failed',
              };
              stateLabel.dataset.state = state;
              stateLabel.textContent = words[state] ?? state;
              if (state === 'failed') showMessage(live.error?.message ?? 'the subscription failed');
              else if (state === 'live') showMessage('');
            }

            async function loadSchema() {
              try {
                entities = (await schema(options())).entities;
              } catch (error) {
                showMessage(error.code === 'unauthorized' ? 'This daemon needs its token: enter it above.' : error.message);
                tokenField.parentElement.hidden = false;
                if (error.code === 'unauthorized') tokenField.focus();
                return false;
              }
              const chosen = setting('entity') ?? entityField.value;
              entityField.replaceChildren(...entities.map((entity) => new Option(entity.name, entity.name)));
              if (entities.some((entity) => entity.name === chosen)) entityField.value = chosen;
              showMessage(entities.length === 0 ? 'The store has no entities yet.' : '');
              return true;
            }

            // MARK: - The table

            function format(value) {
              if (value === undefined || value === null) return '';
              if (typeof value === 'object') return JSON.stringify(value);
              return String(value);
            }

            function makeRow(record, mark) {
              const row = document.createElement('tr');
              fill(row, record);
              if (mark) markRow(row, mark);
              return row;
            }

            function fill(row, record) {
              row.replaceChildren(...columns.map((column) => {
                const cell = document.createElement('td');
                cell.textContent = format(record[column]);
                return cell;
              }));
            }

            function markRow(row, mark) {
              row.classList.remove('rill-inserted', 'rill-moved', 'rill-updated');
              // Read a layout property so that the animation starts again on a row marked twice.
              void row.offsetWidth;
              row.classList.add(`rill-${mark}`);
            }

            /** Columns: the entity's fields, then any field a record has that they lack. */
            function ensureColumns(records) {
              let added = false;
              for (const record of records) {
                for (const name of Object.keys(record ?? {})) {
                  if (!columns.includes(name)) {
                    columns.push(name);
                    added = true;
                  }
                }
              }
              if (added || table.tHead.rows[0].cells.length !== columns.length) {
                table.tHead.rows[0].replaceChildren(...columns.map((name) => {
                  const header = document.createElement('th');
                  header.textContent = name;
                  return header;
                }));
              }
              return added;
            }

            function render(records) {
              ensureColumns(records);
              rows = records.map((record) => makeRow(record));
              table.tBodies[0].replaceChildren(...rows);
              countLabel.textContent = `${records.length} record${records.length === 1 ? '' : 's'}`;
            }

            /** Applies a change to the rows as `applyChange` does to the records, marking what it touched. */
            function applyToRows(change) {
              const body = table.tBodies[0];
              const removed = change.removals.map((entry) => [entry.offset, true])
                .concat(change.moves.map((entry) => [entry.from, false]));
              removed.sort((a, b) => b[0] - a[0]);
              for (const [offset, leaves] of removed) {
                const [row] = rows.splice(offset, 1);
                if (!leaves) {
                  row.remove();
                  continue;
                }
                // A removed row stays a moment, fading, outside `rows`.
                row.classList.add('rill-removed');
                row.addEventListener('animationend', () => row.remove());
                setTimeout(() => row.remove(), 1500);
              }
              const inserted = change.insertions.map((entry) => [entry.offset, entry.record, 'inserted'])
                .concat(change.moves.map((entry) => [entry.to, entry.record, 'moved']));
              inserted.sort((a, b) => a[0] - b[0]);
              for (const [offset, record, mark] of inserted) {
                const row = makeRow(record, mark);
                const next = rows[offset];
                if (next) body.insertBefore(row, next);
                else if (rows.length > 0) rows[rows.length - 1].after(row);
                else body.prepend(row);
                rows.splice(offset, 0, row);
              }
              for (const entry of change.updates) {
                fill(rows[entry.offset], entry.record);
                markRow(rows[entry.offset], 'updated');
              }
              countLabel.textContent = `${rows.length} record${rows.length === 1 ? '' : 's'}`;
            }

            // MARK: - Live and past

            function onEvent(event, live) {
              seqLabel.textContent = String(event.seq);
              // How many times the daemon replaced the results (a subscriber that fell behind), for a look.
              if (event.type === 'reset') seqLabel.dataset.resets = String(Number(seqLabel.dataset.resets ?? 0) + 1);
              const atEnd = slider.disabled || Number(slider.value) === Number(slider.max);
              slider.max = String(event.seq);
              slider.disabled = false;
              if (atEnd) slider.value = slider.max;
              if (view !== 'live') return;
              if (event.type === 'change') {
                const { insertions, moves, updates } = event.change;
                const touched = [...insertions, ...moves, ...updates].map((entry) => entry.record);
                if (ensureColumns(touched)) render(live.records);
                else applyToRows(event.change);
              } else if (event.type !== 'progress') {
                render(live.records);
              }
            }

            function start() {
              subscription?.close();
              const entity = entities.find((candidate) => candidate.name === entityField.value);
              if (!entity) return;
              columns = Object.keys(entity.fields ?? {});
              if (columns.includes('id')) columns = ['id', ...columns.filter((name) => name !== 'id')];
              ensureColumns([]);
              render([]);
              view = 'live';
              pastRequest += 1;
              delete table.dataset.asOf;
              table.classList.remove('past');
              whenLabel.textContent = 'live';
              seqLabel.textContent = '–';
              slider.disabled = true;
              // The query is what follows the entity's name; a query typed with the name too is taken as well.
              const typed = queryField.value.trim();
              const after = typed.slice(entity.name.length, entity.name.length + 1);
              if (typed.startsWith(entity.name) && (after === '' || /\s/.test(after))) {
                queryField.value = typed.slice(entity.name.length).trim();
              }
              subscription = subscribe(entity.name, queryField.value, {
                ...options(), progress, onevent: onEvent, onstate: showState,
              });
              const address = new URLSearchParams(fragment);
              address.set('entity', entity.name);
              address.set('q', queryField.value);
              // The address keeps the entity and query (and a token it was given), to reload or share.
              window.history.replaceState(null, '', `#${address}`);
            }

            function goLive() {
              view = 'live';
              pastRequest += 1;
              delete table.dataset.asOf;
              table.classList.remove('past');
              whenLabel.textContent = 'live';
              if (subscription) render(subscription.records);
            }

            async function showPast(sequence) {
              const request = ++pastRequest;
              view = sequence;
              whenLabel.textContent = `commit ${sequence}…`;
              try {
                const past = await query(subscription.text, { ...options(), asOf: sequence });
                if (request !== pastRequest) return;
                render(past.results);
                table.classList.add('past');
                table.dataset.asOf = String(sequence);
                whenLabel.textContent = `as of commit ${past.seq}`;
                showMessage('');
                if (sequence > 0) {
                  const commits = (await history({ since: sequence - 1, limit: 1 }, options())).commits;
                  if (request === pastRequest && commits[0]?.seq === sequence) {
                    whenLabel.textContent = `as of commit ${past.seq}, ${new Date(commits[0].timestamp).toLocaleString()}`;
                  }
                }
              } catch (error) {
                if (request === pastRequest) showMessage(error.message);
              }
            }

            let sliderTimer = null;
            slider.addEventListener('input', () => {
              clearTimeout(sliderTimer);
              sliderTimer = setTimeout(() => {
                const value = Number(slider.value);
                if (value >= Number(slider.max)) goLive();
                else showPast(value);
              }, 60);
            });

            form.addEventListener('submit', async (event) => {
              event.preventDefault();
              if (entities.length === 0 || entityField.options.length === 0) {
                if (!(await loadSchema())) return;
              }
              start();
            });

            tokenField.addEventListener('change', () => loadSchema());

            // For a look from the browser's console: the page's subscription (its records, seq and state).
            window.rillPage = { get subscription() { return subscription; } };

            if (await loadSchema()) {
              if (setting('entity') && entities.some((entity) => entity.name === setting('entity'))) start();
            }
            """#)
}
