// The text of /ui/rill.js, compiled into the daemon: the page needs no files beside the binary.

extension WebPageAsset {
    /// The JavaScript client, an ES module (Documentation/Protocol.md, "The JavaScript client").
    static let client = WebPageAsset(
        path: "/ui/rill.js", contentType: "text/javascript; charset=utf-8",
        text: #"""
            // Rill's JavaScript client: live queries of `rill serve` in a browser (Documentation/Protocol.md,
            // "The JavaScript client"). An ES module with no dependencies.
            //
            //   import { subscribe } from '/ui/rill.js';
            //   const books = subscribe('Book', 'where isRead == false sort by title', {
            //     token, onevent: (event, subscription) => render(subscription.records) });
            //   …
            //   books.close();

            /** An error the daemon answered (Protocol.md, "Errors"), or one of the client's own. */
            export class RillError extends Error {
              /**
               * @param {string} code `badQuery`, `unauthorized`, … or the client's `network`, `badEvent`, `badChange`
               * @param {string} message what went wrong, for a person
               * @param {number} [status] the HTTP status, when the daemon answered
               */
              constructor(code, message, status = 0) {
                super(message);
                this.name = 'RillError';
                this.code = code;
                this.status = status;
              }
            }

            /**
             * Applies a change event's data to `records` in place, exactly as Swift's `ResultsChange.apply`
             * does: removes at every removal's `offset` and every move's `from`, highest offset first; inserts
             * every insertion's and every move's `record` at its `offset` or `to`, lowest offset first; then
             * replaces the record at every update's `offset`. Returns `records`.
             *
             * `element(entry, kind)` makes what is stored for an inserted, moved or updated entry (`kind` is
             * `'insertion'`, `'move'` or `'update'`); by default its `record`.
             *
             * Throws a `RillError` `badChange` (leaving `records` as they were) when the change does not fit
             * them: an offset out of range, or a repeated one. A client then holds other results than the
             * daemon's and should subscribe afresh.
             */
            export function applyChange(records, change, element = (entry) => entry.record) {
              const lists = ['removals', 'insertions', 'moves', 'updates'];
              for (const name of lists) {
                if (!Array.isArray(change?.[name])) throw new RillError('badChange', `a change needs an array ${name}`);
              }
              const removed = change.removals.map((entry) => entry.offset).concat(change.moves.map((entry) => entry.from));
              removed.sort((a, b) => b - a);
              const inserted = change.insertions.map((entry) => [entry.offset, entry, 'insertion'])
                .concat(change.moves.map((entry) => [entry.to, entry, 'move']));
              inserted.sort((a, b) => a[0] - b[0]);
              // Checked before anything is changed: after removing `removed.length` records and inserting
              // `inserted.length`, every offset must have named a place in the results of its moment.
              const kept = records.length - removed.length;
              const final = kept + inserted.length;
              const valid = (offset, bound) => Number.isInteger(offset) && offset >= 0 && offset < bound;
              removed.forEach((offset, index) => {
                if (!valid(offset, records.length) || (index > 0 && offset === removed[index - 1])) {
                  throw new RillError('badChange', `removal at ${offset} does not fit ${records.length} records`);
                }
              });
              inserted.forEach(([offset], index) => {
                if (!valid(offset, kept + index + 1) || (index > 0 && offset === inserted[index - 1][0])) {
                  throw new RillError('badChange', `insertion at ${offset} does not fit ${kept + index} records`);
                }
              });
              for (const entry of change.updates) {
                if (!valid(entry.offset, final)) {
                  throw new RillError('badChange', `update at ${entry.offset} does not fit ${final} records`);
                }
              }
              for (const offset of removed) records.splice(offset, 1);
              for (const [offset, entry, kind] of inserted) records.splice(offset, 0, element(entry, kind));
              for (const entry of change.updates) records[entry.offset] = element(entry, 'update');
              return records;
            }

            function address(base, path, parameters) {
              const url = new URL(path, base ?? globalThis.location?.href);
              for (const [name, value] of Object.entries(parameters)) {
                if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
              }
              return url.href;
            }

            /**
             * `GET` (or, with `body`, `POST`) of an endpoint of the daemon; resolves to the JSON it answers.
             * Rejects with a `RillError`: the daemon's code and message, or `network` when it did not answer.
             * `options.token` is sent as `Authorization: Bearer …`; `options.base` is the daemon's address
             * (by default the page's own).
             */
            export async function request(path, parameters = {}, options = {}) {
              const headers = {};
              if (options.token) headers.Authorization = `Bearer ${options.token}`;
              let body;
              if (options.body !== undefined) {
                headers['Content-Type'] = 'application/json';
                body = JSON.stringify(options.body);
              }
              let response;
              try {
                response = await fetch(address(options.base, path, parameters), {
                  method: body === undefined ? 'GET' : 'POST', headers, body, cache: 'no-store', signal: options.signal,
                });
              } catch (error) {
                if (error?.name === 'AbortError') throw error;
                throw new RillError('network', `the daemon did not answer (${error?.message ?? error})`);
              }
              const text = await response.text();
              let value;
              try {
                value = JSON.parse(text);
              } catch {
                throw new RillError('badResponse', `the daemon answered ${response.status} with no JSON`, response.status);
              }
              if (!response.ok) {
                const error = value?.error ?? {};
                throw new RillError(error.code ?? 'http', error.message ?? `HTTP ${response.status}`, response.status);
              }
              return value;
            }

            /** The results of a text query, `{seq, results}`; with `options.asOf` (a sequence or a date) as of then. */
            export function query(text, options = {}) {
              return request('/v1/query', { q: text, as_of: options.asOf }, options);
            }

            /** The schema of every entity (`{entities:[…]}`, as `GET /v1/schema` answers). */
            export function schema(options = {}) {
              return request('/v1/schema', { entity: options.entity }, options);
            }

            /** Commits of the log (`GET /v1/history` with `parameters` such as `since`, `until`, `limit`). */
            export function history(parameters = {}, options = {}) {
              return request('/v1/history', parameters, options);
            }

            /**
             * A live query: `subscribe(entity, query, options)` follows `<entity> <query>` (the text language
             * after the entity name, `where … sort by … limit …`, or empty for every record) and keeps its
             * results in `records`, in the query's order.
             *
             * options:
             * - `token`: the daemon's bearer token (sent as `access_token`, which `EventSource` needs);
             * - `base`: the daemon's address, by default the page's own;
             * - `since`: a sequence to resume after (the records then start as `options.records`);
             * - `progress`: seconds between `progress` events when commits leave the results as they are;
             * - `onevent(event, subscription)`: after each event is applied; `event.type` is `results`,
             *   `reset`, `change` or `progress`, `event.seq` its commit, `event.change` a change's data;
             * - `onstate(state, subscription)`: `connecting`, `live`, `reconnecting`, `failed` (see `error`)
             *   or `closed`.
             */
            export function subscribe(entity, query = '', options = {}) {
              return new Subscription(entity, query, options);
            }

            /** What `subscribe` returns. */
            export class Subscription {
              constructor(entity, query, options) {
                this.entity = entity;
                this.text = query.trim() === '' ? entity : `${entity} ${query.trim()}`;
                this.options = options;
                /** The results, in the query's order. */
                this.records = options.since == null ? [] : (options.records ?? []);
                /** The commit the records reflect (the last event id), or null before the first event. */
                this.seq = options.since ?? null;
                /** The connection's state; `error` holds the `RillError` of `failed`. */
                this.state = 'connecting';
                this.error = null;
                this.reconnects = 0;
                this.source = null;
                this.timer = null;
                this.delay = 250;
                this.open();
              }

              /** Ends the subscription. */
              close() {
                clearTimeout(this.timer);
                this.source?.close();
                this.source = null;
                this.setState('closed');
              }

              setState(state, error = null) {
                if (this.state === state && this.error === error) return;
                this.state = state;
                this.error = error;
                this.options.onstate?.(state, this);
              }

              open() {
                const parameters = {
                  q: this.text, access_token: this.options.token, progress: this.options.progress, since: this.seq,
                };
                const source = new EventSource(address(this.options.base, '/v1/subscribe', parameters));
                this.source = source;
                source.onopen = () => {
                  this.delay = 250;
                  this.setState('live');
                };
                for (const type of ['results', 'reset', 'change', 'progress']) {
                  source.addEventListener(type, (event) => this.receive(source, type, event));
                }
                source.addEventListener('error', (event) => {
                  if (source !== this.source) return;
                  if (typeof event.data === 'string') {
                    // The daemon's `error` event: the query stopped, and the stream ends.
                    let error;
                    try {
                      error = JSON.parse(event.data).error;
                    } catch {
                      error = null;
                    }
                    this.fail(new RillError(error?.code ?? 'failed', error?.message ?? 'the query stopped'));
                  } else if (source.readyState === EventSource.CONNECTING) {
                    // EventSource reconnects by itself, with Last-Event-ID.
                    this.reconnects += 1;
                    this.setState('reconnecting');
                  } else {
                    this.recover();
                  }
                });
              }

              receive(source, type, event) {
                if (source !== this.source) return;
                let data;
                try {
                  data = JSON.parse(event.data);
                } catch {
                  this.resubscribe(new RillError('badEvent', `a ${type} event whose data is not JSON`));
                  return;
                }
                if (!Number.isInteger(data?.seq)) {
                  this.resubscribe(new RillError('badEvent', `a ${type} event without a seq`));
                  return;
                }
                if (type === 'results' || type === 'reset') {
                  if (!Array.isArray(data.results)) {
                    this.resubscribe(new RillError('badEvent', `a ${type} event without results`));
                    return;
                  }
                  this.records = data.results;
                } else if (type === 'change') {
                  // Ids only grow: a change at or before the commit the records reflect is one they hold.
                  if (this.seq !== null && data.seq <= this.seq) return;
                  try {
                    applyChange(this.records, data);
                  } catch (error) {
                    this.resubscribe(error);
                    return;
                  }
                }
                this.seq = data.seq;
                this.setState('live');
                this.options.onevent?.({ type, seq: data.seq, change: type === 'change' ? data : undefined }, this);
              }

              /** The records no longer follow the daemon's: start again from fresh results. */
              resubscribe(error) {
                console.warn(`rill: ${error.message}; subscribing afresh`);
                this.source?.close();
                this.seq = null;
                this.records = [];
                this.open();
              }

              fail(error) {
                clearTimeout(this.timer);
                this.source?.close();
                this.source = null;
                this.setState('failed', error);
              }

              /**
               * The stream was refused or the browser gave up reconnecting: ask the daemon why. A bad query
               * or token fails the subscription; a daemon that does not answer (yet) is asked again later,
               * and a daemon that answers is subscribed to again with `since`, the last commit received.
               */
              async recover() {
                this.source?.close();
                this.source = null;
                this.reconnects += 1;
                this.setState('reconnecting');
                try {
                  await request('/v1/health', {}, this.options);
                  await request('/v1/query', { q: this.text }, this.options);
                } catch (error) {
                  if (this.state === 'closed') return;
                  const transient = error.code === 'network' || error.status === 503 || error.status >= 500;
                  if (!transient) {
                    this.fail(error);
                    return;
                  }
                  this.timer = setTimeout(() => this.recover(), this.delay);
                  this.delay = Math.min(this.delay * 2, 5000);
                  return;
                }
                if (this.state !== 'closed') this.open();
              }
            }
            """#)
}
