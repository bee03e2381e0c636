package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/postgres"
)

// ReplicaOptions configure NewReplica. Store is required.
type ReplicaOptions struct {
	// Store is the Postgres store every replica shares. Required.
	Store *postgres.Store
	// LeaseTTL is how long a run's lease lives without a heartbeat: how
	// long after a replica dies its runs are failed and their threads
	// usable; 0 means postgres.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Owner names this replica in lease rows; "" means host:pid:random.
	Owner string
	// Poll is how often a client following a run of another replica
	// re-reads without a notification and checks that the run is still
	// alive, and how often the extensions file is compared with the
	// database; 0 means postgres.DefaultEventPoll.
	Poll time.Duration
	// ExtensionsPath, when set, is this replica's extensions_config.json,
	// kept in step with a versioned copy in the database (for replicas
	// that do not share a disk): changes made on any replica are used by
	// every replica's next run. "" leaves the file alone (replicas that
	// share it need nothing more).
	ExtensionsPath string
	// Logger receives relay failures; nil discards.
	Logger *slog.Logger
}

// Replica makes gateway processes sharing one Postgres database behave as
// one service. It supplies:
//
//   - the RunLocks of every Server (one run per thread across replicas,
//     through postgres.Leases; a busy thread answers 409 on any replica);
//   - a relay of each local run's SSE frames into the database
//     (postgres.Events), so that GET .../runs/{rid}/stream on another
//     replica follows the run, and POST .../cancel on another replica
//     reaches it (NOTIFY);
//   - a store wrapper that starts the relay when a run is recorded;
//   - with ReplicaOptions.ExtensionsPath, the extensions config kept in
//     step with a versioned copy in the database.
//
// Wire it in three steps: wrap the options with [Replica.Options], build
// the Server with [New], then [Replica.Attach] it and serve
// [Replica.Handler] instead of [Server.Handler] ([Replica.Serve] does, as
// Server.Serve). Close the Server before the Replica, and the Replica
// before the store.
type Replica struct {
	// immutable after NewReplica
	store  *postgres.Store
	leases *postgres.Leases
	events *postgres.Events
	poll   time.Duration
	logger *slog.Logger
	srv    atomic.Pointer[Server]
	pumps  sync.WaitGroup
	relay  chan postgres.Appended // pumps → the writer
	wrote  chan struct{}          // closed when the writer is done
	ext    *extSync               // nil without ReplicaOptions.ExtensionsPath
	extEnd context.CancelFunc
	extRan chan struct{}

	closeOnce  sync.Once
	closing    chan struct{} // closed by shutdown: remote follows end
	closeRelay sync.Once
}

// NewReplica starts the leases (heartbeat and sweeper) and the event
// listener of this replica.
func NewReplica(o ReplicaOptions) (*Replica, error) {
	if o.Store == nil {
		return nil, errors.New("gateway: replica without a Postgres store")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Replica{store: o.Store, poll: cmp.Or(o.Poll, postgres.DefaultEventPoll), logger: logger,
		closing: make(chan struct{})}
	r.leases = postgres.NewLeases(o.Store, postgres.LeaseOptions{Owner: o.Owner, TTL: o.LeaseTTL,
		OnLost: func(_, runID string) { r.cancelLocal(runID) }, Logger: logger})
	listen := map[string]func(string){}
	if o.ExtensionsPath != "" {
		r.ext = newExtSync(o.ExtensionsPath, o.Store, r.leases.Owner(), r.poll, logger)
		listen[postgres.ExtensionsChannel] = r.ext.notify
	}
	var err error
	r.events, err = postgres.NewEvents(o.Store, postgres.EventsOptions{OnCancel: r.cancelLocal, Listen: listen, Logger: logger})
	if err != nil {
		r.leases.Close()
		return nil, err
	}
	r.relay, r.wrote = make(chan postgres.Appended, relayQueue), make(chan struct{})
	go r.write()
	if r.ext != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := r.ext.sync(ctx); err != nil {
			logger.Error("cannot sync the extensions config with the database", "path", o.ExtensionsPath, "err", err)
		}
		cancel()
		var runCtx context.Context
		runCtx, r.extEnd = context.WithCancel(context.Background())
		r.extRan = make(chan struct{})
		go r.ext.run(runCtx, r.extRan)
	}
	return r, nil
}

// Relay batching: the writer stores whatever the pumps queued since its
// last statement, up to relayBatch frames, in one statement.
const (
	relayQueue = 1024
	relayBatch = 2000
)

// Leases returns the replica's run leases.
func (r *Replica) Leases() *postgres.Leases { return r.leases }

// Events returns the replica's run event relay.
func (r *Replica) Events() *postgres.Events { return r.events }

// Options returns o with this replica's RunLocks and with Store wrapped
// so that every run started here is relayed and owned by this replica.
// o.Store must be the replica's store (or nil, which means it): runs are
// recorded through the replica's store itself.
func (r *Replica) Options(o Options) Options {
	o.RunLocks = replicaLocks{r}
	o.Store = &relayStore{Store: cmp.Or[store.Store](o.Store, r.store), r: r}
	if r.ext != nil {
		o.MCP = publishingResetter{ext: r.ext, next: o.MCP}
	}
	return o
}

// Attach binds the Server built from Options.
func (r *Replica) Attach(s *Server) { r.srv.Store(s) }

// Close stops the relay, the leases' heartbeat and the listener. Close
// the Server first: it ends the runs, whose relays then finish.
func (r *Replica) Close() error {
	r.shutdown()
	r.closeRelay.Do(func() {
		r.pumps.Wait()
		close(r.relay)
	})
	<-r.wrote
	if r.ext != nil {
		r.extEnd()
		<-r.extRan
	}
	return errors.Join(r.events.Close(), r.leases.Close())
}

func (r *Replica) shutdown() { r.closeOnce.Do(func() { close(r.closing) }) }

// Serve is Server.Serve with the replica's Handler: it serves until ctx
// is done, then shuts down gracefully (runs in flight are cancelled, and
// streams following runs of other replicas end).
func (r *Replica) Serve(ctx context.Context, ln net.Listener) error {
	s := r.srv.Load()
	if s == nil {
		return errors.New("gateway: Replica.Serve before Attach")
	}
	srv := &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { r.shutdown(); _ = s.Close() })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		r.shutdown()
		_ = s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	_ = s.Close()
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// replicaLocks is the RunLocks of a replica.
type replicaLocks struct{ r *Replica }

// Acquire implements RunLocks.
func (l replicaLocks) Acquire(ctx context.Context, threadID, runID string) (func(), error) {
	if l.r.ext != nil {
		l.r.ext.beforeRun(ctx) // the run's assembly follows the lease
	}
	release, err := l.r.leases.Acquire(ctx, threadID, runID)
	if errors.Is(err, postgres.ErrLeaseHeld) {
		return nil, fmt.Errorf("%w: %v", ErrThreadBusy, err)
	}
	return release, err
}

// relayStore starts the relay of a local run when the agent records it
// (the run is registered by then, and its frames are kept from the
// first).
type relayStore struct {
	store.Store
	r *Replica
}

// CreateRun implements store.Store. The run is recorded as owned by this
// replica (postgres.Store.CreateRunOwned), so that the lease sweep fails
// it if it is ever left running without a live lease.
func (s *relayStore) CreateRun(ctx context.Context, run *store.Run) error {
	if err := s.r.store.CreateRunOwned(ctx, run, s.r.leases.Owner()); err != nil {
		return err
	}
	if srv := s.r.srv.Load(); srv != nil {
		if rn := srv.activeRun(run.ID); rn != nil {
			s.r.pumps.Add(1)
			go s.r.pump(rn)
		}
	}
	return nil
}

// pump queues a local run's frames for the writer as they come, until
// its end frame.
func (r *Replica) pump(rn *run) {
	defer r.pumps.Done()
	next := 0
	for {
		frames, done, wake := rn.read(next)
		if len(frames) > 0 {
			r.relay <- postgres.Appended{ThreadID: rn.threadID, RunID: rn.id, First: next + 1, Frames: frames}
			next += len(frames)
		}
		if done && len(frames) == 0 {
			return
		}
		if !done {
			<-wake
		}
	}
}

// write is the relay's single writer: one statement per batch of queued
// frames, so that a burst of runs costs a few round trips, and frames of
// one run are committed in order (followers read by sequence).
func (r *Replica) write() {
	defer close(r.wrote)
	for first := range r.relay {
		batch := []postgres.Appended{first}
		n := len(first.Frames)
	collect:
		for n < relayBatch {
			select {
			case a, ok := <-r.relay:
				if !ok {
					break collect
				}
				batch = append(batch, a)
				n += len(a.Frames)
			default:
				break collect
			}
		}
		r.appendFrames(batch, n)
	}
}

// appendFrames stores a batch, retrying briefly; a follower of a run whose
// frames could not be stored sees a gap, and the failure is logged.
func (r *Replica) appendFrames(batch []postgres.Appended, n int) {
	var err error
	for attempt := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = r.events.AppendMany(ctx, batch)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	r.logger.Error("cannot relay run frames; followers on other replicas miss them", "runs", len(batch), "frames", n, "err", err)
}

// cancelLocal cancels a run of this replica (a cancel requested through
// another replica, or a lost lease).
func (r *Replica) cancelLocal(runID string) {
	if srv := r.srv.Load(); srv != nil {
		if rn := srv.activeRun(runID); rn != nil {
			rn.requestCancel()
		}
	}
}

// Handler serves the attached Server's routes, and answers the stream
// and cancel routes of a run that is active on another replica.
func (r *Replica) Handler() http.Handler {
	served := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		srv := r.srv.Load()
		if srv == nil {
			writeError(w, http.StatusServiceUnavailable, "The gateway is starting")
			return
		}
		srv.Handler().ServeHTTP(w, req)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/threads/{tid}/runs/{rid}/stream", r.joinRemote)
	mux.HandleFunc("POST /api/threads/{tid}/runs/{rid}/cancel", r.cancelRemote)
	mux.Handle("/", served)
	return stripLangGraph(mux)
}

// remoteRun returns the caller's run rid of thread tid when it is active
// on another replica; nil means "let the Server answer" (a local run, a
// missing one, an ended one, or no valid token).
//
// With followEnded, a run that already ended there is returned too while
// its relayed frames are kept, so that a follower can replay it.
func (r *Replica) remoteRun(req *http.Request, followEnded bool) (*Server, *principal, *store.Run) {
	srv := r.srv.Load()
	if srv == nil {
		return nil, nil, nil
	}
	u := srv.authenticate(req)
	rid, tid := req.PathValue("rid"), req.PathValue("tid")
	if u == nil || srv.activeRun(rid) != nil {
		return srv, nil, nil
	}
	sr, active, err := r.runState(req.Context(), tid, rid)
	if err != nil {
		r.logger.Error("run lookup failed", "run_id", rid, "err", err)
	}
	if sr == nil || sr.UserID != u.ID {
		return srv, nil, nil
	}
	if !active {
		if !followEnded {
			return srv, nil, nil
		}
		// A run that ended on another replica between the client's
		// request and this lookup is still followed, from its relayed
		// frames (kept for a while after the end), so a fast run never
		// answers 409 to a follower; without frames the Server answers.
		frames, err := r.events.Read(req.Context(), sr.ID, 0, 1)
		if err != nil || len(frames) == 0 {
			return srv, nil, nil
		}
	}
	return srv, u, sr
}

// runState returns run rid of thread tid as the database knows it, and
// whether it is active. A run whose lease is held but which the agent has
// not recorded yet (it is starting) is returned as pending. A nil run
// without an error means unknown.
func (r *Replica) runState(ctx context.Context, tid, rid string) (*store.Run, bool, error) {
	sr, err := r.store.GetRun(ctx, rid)
	switch {
	case err == nil:
		if sr.ThreadID != tid {
			return nil, false, nil
		}
		return sr, runActive(sr.Status), nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, false, err
	}
	lease, held, err := r.leases.Get(ctx, tid)
	if err != nil || !held || lease.RunID != rid {
		return nil, false, err
	}
	th, err := r.store.GetThread(ctx, tid)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &store.Run{ID: rid, ThreadID: tid, UserID: th.UserID, Status: store.RunPending}, true, nil
}

// serveLocal hands a request to the attached Server.
func (r *Replica) serveLocal(w http.ResponseWriter, req *http.Request) {
	srv := r.srv.Load()
	if srv == nil {
		writeError(w, http.StatusServiceUnavailable, "The gateway is starting")
		return
	}
	srv.Handler().ServeHTTP(w, req)
}

func runActive(status string) bool { return status == store.RunRunning || status == store.RunPending }

// joinRemote follows a run of another replica from the frames it relays.
func (r *Replica) joinRemote(w http.ResponseWriter, req *http.Request) {
	srv, u, sr := r.remoteRun(req, true)
	if u == nil {
		r.serveLocal(w, req)
		return
	}
	after := 0
	if v := req.Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			after = n
		}
	}
	cancelOnDisconnect, _ := strconv.ParseBool(req.URL.Query().Get("cancel_on_disconnect"))
	wake, stop := r.events.Watch(sr.ID)
	defer stop()

	rs := &remoteStream{r: r, w: w, req: req, sr: sr, rc: startSSE(w, sr.ThreadID, sr.ID),
		heartbeat: srv.heartbeat, beat: time.NewTicker(srv.heartbeat), next: after,
		cancelOnDisconnect: cancelOnDisconnect, progress: time.Now(),
		// A run that ended normally has its last frames relayed shortly
		// after its status changes; only a run without new frames for
		// this long is ended here (its replica died).
		grace: max(2*r.poll, 2*time.Second)}
	defer rs.beat.Stop()
	poll := time.NewTicker(r.poll)
	defer poll.Stop()
	for {
		done, more := rs.relay()
		if done {
			return
		}
		if more {
			continue
		}
		select {
		case <-wake:
		case <-poll.C:
			if rs.endIfGone() {
				return
			}
		case <-rs.beat.C:
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil || rs.rc.Flush() != nil {
				rs.disconnected()
				return
			}
		case <-req.Context().Done():
			rs.disconnected()
			return
		case <-r.closing:
			return // no end frame: the run goes on; the client rejoins elsewhere
		}
	}
}

// remoteStream is one client's stream of a run on another replica: the
// relayed frames after next, heartbeats, and the end of a run whose
// replica died.
type remoteStream struct {
	r                  *Replica
	w                  http.ResponseWriter
	req                *http.Request
	sr                 *store.Run
	rc                 *http.ResponseController
	heartbeat          time.Duration
	beat               *time.Ticker
	next               int       // the last frame sent
	cancelOnDisconnect bool      // cancel the run when the client goes
	progress           time.Time // when a frame last arrived
	grace              time.Duration
}

// relayFrames is how many relayed frames one read returns at most.
const relayFrames = 500

// relay sends the frames relayed since the last one sent. done means the
// stream must stop (the end frame was sent, the client went, or the
// relay failed); more means a full page was read and more may wait.
func (s *remoteStream) relay() (done, more bool) {
	frames, err := s.r.events.Read(s.req.Context(), s.sr.ID, s.next, relayFrames)
	if err != nil {
		if s.req.Context().Err() == nil {
			s.r.logger.Error("cannot read relayed frames", "run_id", s.sr.ID, "err", err)
		}
		return true, false
	}
	if len(frames) == 0 {
		return false, false
	}
	out := make([][]byte, 0, len(frames))
	end := false
	for _, f := range frames {
		out = append(out, f.Data)
		s.next = f.Seq
		end = end || isEndFrame(f.Data)
	}
	s.progress = time.Now()
	if s.write(out) || end {
		return true, false
	}
	return false, len(frames) == relayFrames
}

// endIfGone checks, after a while without frames, whether the run is
// still alive; a run whose replica died is failed by the lease sweeper,
// and its stream ends here as the Server ends a failed run. It reports
// whether the stream ended.
func (s *remoteStream) endIfGone() bool {
	ctx := s.req.Context()
	cur, active, err := s.r.runState(ctx, s.sr.ThreadID, s.sr.ID)
	if active || err != nil || time.Since(s.progress) < s.grace {
		return false
	}
	rest, err := s.r.events.Read(ctx, s.sr.ID, s.next, 0)
	if err == nil && len(rest) > 0 {
		return false // frames arrived meanwhile: send them first
	}
	var tail [][]byte
	if cur != nil && cur.Status == store.RunError {
		payload, _ := json.Marshal(map[string]any{"message": cur.Error, "name": "RunError"})
		tail = append(tail, sseFrame("error", string(payload), s.next+1))
		s.next++
	}
	s.write(append(tail, sseFrame("end", "null", s.next+1)))
	return true
}

// write sends frames and reports whether the stream must stop.
func (s *remoteStream) write(frames [][]byte) (stop bool) {
	for _, f := range frames {
		if _, err := s.w.Write(f); err != nil {
			s.disconnected()
			return true
		}
	}
	if s.rc.Flush() != nil {
		s.disconnected()
		return true
	}
	s.beat.Reset(s.heartbeat)
	return false
}

// disconnected cancels the run when the client asked for it
// (cancel_on_disconnect).
func (s *remoteStream) disconnected() {
	if s.cancelOnDisconnect {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.req.Context()), 5*time.Second)
		defer cancel()
		_ = s.r.events.RequestCancel(ctx, s.sr.ID)
	}
}

// isEndFrame reports whether an SSE frame is the end frame.
func isEndFrame(f []byte) bool { return strings.HasPrefix(string(f), "event: end\n") }

// sseFrame formats one frame as the Server writes them.
func sseFrame(event, data string, id int) []byte {
	return []byte("event: " + event + "\ndata: " + data + "\nid: " + strconv.Itoa(id) + "\n\n")
}

// cancelRemote cancels a run of another replica: 202 at once, or 204 once
// it has ended with ?wait=1.
func (r *Replica) cancelRemote(w http.ResponseWriter, req *http.Request) {
	srv, u, sr := r.remoteRun(req, false)
	if u == nil {
		r.serveLocal(w, req)
		return
	}
	if err := r.events.RequestCancel(req.Context(), sr.ID); err != nil {
		srv.internal(w, "cannot cancel the run", err)
		return
	}
	if wait, _ := strconv.ParseBool(req.URL.Query().Get("wait")); !wait {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	resend := time.NewTicker(cancelResend)
	defer resend.Stop()
	for {
		select {
		case <-req.Context().Done():
			return
		case <-resend.C:
			// A notification is not stored: one that reached the replica
			// while its listener reconnected, or before the run was
			// registered there, is lost. Asking again is harmless.
			if err := r.events.RequestCancel(req.Context(), sr.ID); err != nil {
				r.logger.Warn("cannot repeat the cancel request", "run_id", sr.ID, "err", err)
			}
		case <-t.C:
			if _, active, err := r.runState(req.Context(), sr.ThreadID, sr.ID); err == nil && !active {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
}

// cancelResend is how often a cancel that waits for a run on another
// replica repeats its request.
const cancelResend = time.Second
