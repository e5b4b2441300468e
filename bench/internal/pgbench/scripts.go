package pgbench

import (
	"fmt"
	"strings"
)

// Script is one scenario's pgbench script: one execution is one request of
// the server.
type Script struct {
	Scenario string
	Text     string
	// RoundTrips are the round trips of one execution, named as the
	// server's query tracer names them: the sqlc name, begin, commit, and
	// statements sent in one pipeline joined with "+".
	RoundTrips []string
}

// Statements counts the statements of one execution.
func (s Script) Statements() int {
	n := 0
	for _, rt := range s.RoundTrips {
		n += strings.Count(rt, "+") + 1
	}
	return n
}

// Variables the orchestrator defines with pgbench -D:
//
//	t0, nusers, nreplay   user session tokens are t0 .. t0+nusers-1 (decimal
//	                      strings); the first nreplay hold a replayable key
//	                      equal to their token
//	a0, r0                author and reviewer session tokens, a0+client_id
//	organization_id, cbase  the organization; client k acts on creative
//	                      number cbase+k
//	maxclients, cmax      the search looks for a number from
//	                      cbase+maxclients to cmax (the sample's range)
//	fp, ttls              an idempotency fingerprint (bytea) and TTL (seconds)
//	network, address, currency, confirmations_required, ttl, reserve_for,
//	max_open              deposit settings as the server sends them (the
//	                      limit less the other 7 create slots of a user)
//	dbody, dloc, cbody    stored answers: a deposit's body and Location, a
//	cloc                  creative's body and Location
//	assets                a version's assets as the server sends them (JSON)
//	nostatus              the empty status filter ({})
//	ready, phase          0: per-client state (setup done, action toggle)
//	now                   the transaction clock an action writes as updated_at
//
// The values the server sends as parameters are parameters here too
// (variables, not literals), so the statements plan the same way.
var setupVariables = []string{
	"ready=0", "phase=0", "ok=200", "created=201", "approve=false",
	"submit=submit", "in_review=in_review", "request_changes=request_changes",
	"changes_requested=changes_requested", "comment=Please sharpen the logo.",
	"before_number=2147483647", "row_limit=21", "now=2026-01-01 00:00:00+00",
	"draft=draft", "ctitle=Bench create", "ctype=static", "aspect=1:1", "geo=US", "lang=en-US",
	"search_window=1000", "nostatus={}",
	`assets=[{"position":1,"file_name":"bench.png","mime_type":"image/png","size_bytes":120000,"url":"https://cdn.acme.test/assets/bench/1.png","width":1080,"height":1080,"duration_ms":null,"sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}]`,
}

// The session lookup takes the token and hashes it in SQL: pgbench cannot
// compute SHA-256, and a hash of a 12-byte string costs the database
// nothing measurable. Its \gset gives user_id to the statements after it.
// A command sends its Idempotency-Key along (the stored answer comes back
// with the session); a read sends the empty string. The lookup is a batch
// of one, as the server sends it when no other request queues with it
// (internal/auth/lookup.go): pgbench's clients never queue for a
// connection.
func sessionArgs(key string) map[string]string {
	return map[string]string{"token_hashes": "ARRAY[sha256(:tok::bytea)]", "idempotency_keys": "ARRAY[" + key + "]"}
}

type builder struct {
	qs    Queries
	text  strings.Builder
	stmts []string
	// batch collects the statements of an open pipeline.
	batch []string
	// counting is off for per-client setup and for the second branch of a
	// toggle, which repeats the first branch's statements.
	counting bool
	err      error
}

func (b *builder) meta(line string) { b.text.WriteString(line + "\n") }

func (b *builder) raw(sql, traced string) {
	b.text.WriteString(sql + ";\n")
	b.record(traced)
}

func (b *builder) record(name string) {
	switch {
	case !b.counting:
	case b.batch != nil:
		b.batch = append(b.batch, name)
	default:
		b.stmts = append(b.stmts, name)
	}
}

// pipeline sends the statements fn writes in one round trip, as the
// server's transactions do (see store.Tx.Next).
func (b *builder) pipeline(fn func()) {
	b.meta(`\startpipeline`)
	b.batch = []string{}
	fn()
	if b.counting {
		b.stmts = append(b.stmts, strings.Join(b.batch, "+"))
	}
	b.batch = nil
	b.meta(`\endpipeline`)
}

func (b *builder) query(name string, args map[string]string, gset bool) {
	q, ok := b.qs[name]
	if !ok {
		b.fail(fmt.Errorf("no query %s", name))
		return
	}
	sql, err := q.With(args)
	if err != nil {
		b.fail(err)
		return
	}
	end := ";"
	if gset {
		end = " \\gset"
	}
	b.text.WriteString(sql + end + "\n")
	b.record(name)
}

func (b *builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *builder) script(scenario string) (Script, error) {
	if b.err != nil {
		return Script{}, fmt.Errorf("%s: %w", scenario, b.err)
	}
	return Script{Scenario: scenario, Text: b.text.String(), RoundTrips: b.stmts}, nil
}

// Scripts returns the script of every scenario.
func Scripts(qs Queries) (map[string]Script, error) {
	out := map[string]Script{}
	for name, build := range map[string]func(*builder){
		"action": actionScript, "deposit": depositScript, "replay": replayScript, "get": getScript, "list": listScript,
		"create": createScript, "version": versionScript, "search": searchScript,
	} {
		b := &builder{qs: qs, counting: true}
		build(b)
		s, err := b.script(name)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// SetupVariables are the -D definitions every script expects besides the
// orchestrator's (see the variable list above).
func SetupVariables() []string { return setupVariables }

var claimArgs = map[string]string{"fingerprint": ":fp", "ttl_seconds": ":ttls"}

// keyed runs a first execution of a command the way the idempotency runner
// does with an Idempotency-Key whose stored answer the session lookup found
// missing: BEGIN, the claim and the command's first round trip (first) in
// one pipeline, then the rest of the command, then the stored answer with
// COMMIT (with the statements beforeAnswer writes, such as the outbox
// event, in front of it).
func keyed(b *builder, status, body, location string, first, rest func(), beforeAnswer ...func()) {
	b.pipeline(func() {
		b.raw("BEGIN", "begin")
		b.query("IdempotencyKeyInsert", claimArgs, false)
		first()
	})
	rest()
	b.pipeline(func() {
		for _, f := range beforeAnswer {
			f()
		}
		b.query("IdempotencyKeySetResponse", map[string]string{
			"status_code": status, "response_body": body, "response_location": location,
		}, false)
		b.raw("COMMIT", "commit")
	})
}

func depositScript(b *builder) {
	b.meta(`\set tok :t0 + random(0, :nusers - 1)`)
	b.meta(`\set key random(1, 9000000000000000000)`)
	b.meta(`\set base_amount_minor 10000000 + 10000 * random(0, 998999)`)
	b.meta(`\set suffix_minor random(1, 9999)`)
	b.meta(`\set requested_amount_minor :base_amount_minor + :suffix_minor`)
	b.meta(`\set slot random(0, 7)`)
	b.query("SessionGetBatch", sessionArgs(":key"), true)
	keyed(b, ":created", ":dbody", ":dloc", func() {
		b.query("DepositCreateSavepoint", nil, false)
		b.query("DepositOwnerSlotLock", nil, false)
		b.query("DepositInsert", nil, false)
	}, func() {})
}

func replayScript(b *builder) {
	b.meta(`\set tok :t0 + random(0, :nreplay - 1)`)
	b.query("SessionGetBatch", sessionArgs(":tok"), true)
}

// creativeSetup reads, once per client, the id of its creative and the
// version ids its detail reads, as the server would have them.
func creativeSetup(b *builder) {
	counting := b.counting
	b.counting = false
	b.meta(`\if :ready = 0`)
	b.meta(`\set cnum :cbase + :client_id`)
	b.meta(`SELECT id AS cid, version AS ver, '{' || current_version_id || '}' AS vids FROM creatives WHERE organization_id = :organization_id AND number = :cnum \gset`)
	b.meta(`SELECT array_agg(current_version_id)::text AS pvids FROM (SELECT current_version_id FROM creatives WHERE organization_id = :organization_id ORDER BY number DESC LIMIT 20) page \gset`)
	b.meta(`\set ready 1`)
	b.meta(`\endif`)
	b.counting = counting
}

// creativeEvent sends a creative command's outbox event, of typ, with the
// answer's size, as the server writes it before the stored answer.
func creativeEvent(b *builder, typ string) {
	b.query("OutboxEventsInsert", map[string]string{
		"types": "ARRAY[" + typ + "]", "organization_ids": "ARRAY[:organization_id]::uuid[]",
		"user_ids": "ARRAY['00000000-0000-0000-0000-000000000000']::uuid[]", "payloads": "ARRAY[convert_from(:cbody, 'UTF8')::json]",
	}, false)
}

// actionScript alternates submit (the author) and request_changes (the
// reviewer) on the client's creative, one action per execution.
func actionScript(b *builder) {
	creativeSetup(b)
	b.meta(`\set phase 1 - :phase`)
	b.meta(`\set key random(1, 9000000000000000000)`)
	b.meta(`\set ver :ver + 1`)
	// The server sends NULL for a submit's comment, the approved version
	// of an action other than approve, and a command's Location; pgbench
	// has no NULL variable, so those are literals.
	action := func(token, verb, from, to, comment string) {
		b.meta(`\set tok ` + token + ` + :client_id`)
		b.query("SessionGetBatch", sessionArgs(":key"), true)
		keyed(b, ":ok", ":cbody", "NULL", func() {
			b.query("CreativeLockForAction", map[string]string{"caller_id": ":user_id", "id": ":cid"}, false)
		}, func() {
			b.pipeline(func() {
				b.query("CreativeTransition", map[string]string{
					"to_status": to, "version": ":ver", "updated_at": ":now", "approved_version_id": "NULL",
					"id": ":cid", "actor_id": ":user_id", "action": verb, "from_status": from, "comment": comment,
					"acknowledged_threads": "NULL",
				}, false)
				b.query("CreativeVersionsWithAssets", map[string]string{"ids": ":vids"}, false)
			})
		}, func() { creativeEvent(b, verb) })
	}
	b.meta(`\if :phase = 1`)
	action(":a0", ":submit", ":changes_requested", ":in_review", "NULL")
	b.meta(`\else`)
	b.counting = false
	action(":r0", ":request_changes", ":in_review", ":changes_requested", ":comment")
	b.meta(`\endif`)
}

func getScript(b *builder) {
	creativeSetup(b)
	b.meta(`\set tok :r0 + :client_id`)
	b.query("SessionGetBatch", sessionArgs("''"), true)
	b.query("MembershipRoleGet", nil, false)
	b.query("CreativeGet", map[string]string{"id": ":cid"}, false)
	b.query("CreativeVersionsWithAssets", map[string]string{"ids": ":vids"}, false)
}

func listScript(b *builder) {
	creativeSetup(b)
	b.meta(`\set tok :r0 + :client_id`)
	b.query("SessionGetBatch", sessionArgs("''"), true)
	b.query("MembershipRoleGet", nil, false)
	b.query("CreativePage", nil, false)
	b.query("CreativeVersionsWithAssets", map[string]string{"ids": ":pvids"}, false)
}

// createScript creates a draft in the organization as the client's author.
// The server sends NULL for the client, task and direction a create leaves
// out; pgbench has no NULL variable, so those are literals.
func createScript(b *builder) {
	b.meta(`\set tok :a0 + :client_id`)
	b.meta(`\set key random(1, 9000000000000000000)`)
	b.query("SessionGetBatch", sessionArgs(":key"), true)
	keyed(b, ":created", ":cbody", ":cloc", func() {
		b.query("CreativeCreateCheck", map[string]string{"client_id": "NULL", "task_id": "NULL", "caller_id": ":user_id"}, false)
	}, func() {
		b.query("CreativeCreate", map[string]string{
			"title": ":ctitle", "type": ":ctype", "aspect_ratio": ":aspect", "geo": ":geo", "language": ":lang",
			"direction_id": "NULL", "author_id": ":user_id", "client_id": "NULL", "task_id": "NULL",
		}, false)
	}, func() { creativeEvent(b, "'creative.created'") })
}

// versionScript adds a one-image version to the client's creative as its
// author. The server draws the version's id; here it is made from the
// execution's random key, and the read of the answer's versions names the
// creative's first version (the same work: one version with one asset).
func versionScript(b *builder) {
	creativeSetup(b)
	b.meta(`\set tok :a0 + :client_id`)
	b.meta(`\set key random(1, 9000000000000000000)`)
	b.meta(`\set ver :ver + 1`)
	b.query("SessionGetBatch", sessionArgs(":key"), true)
	keyed(b, ":created", ":cbody", ":cloc", func() {
		b.query("CreativeLockForAction", map[string]string{"caller_id": ":user_id", "id": ":cid"}, false)
	}, func() {
		b.pipeline(func() {
			b.query("CreativeVersionAdd", map[string]string{
				"actor_id": ":user_id", "from_status": ":draft", "to_status": ":draft", "version_id": "md5(:key::text)::uuid",
				"id": ":cid", "assets": ":assets", "version": ":ver", "updated_at": ":now",
			}, false)
			b.query("CreativeVersionsWithAssets", map[string]string{"ids": ":vids"}, false)
		})
	}, func() { creativeEvent(b, "'creative.version_added'") })
}

// searchScript reads the first page of a title search for the number of
// a random benchmark creative (the last word of its title), as the load
// generator searches. The server sends NULL for the author and reviewer
// filters a search leaves out (literals here, as above).
func searchScript(b *builder) {
	creativeSetup(b)
	b.meta(`\set tok :r0 + :client_id`)
	b.meta(`\set n random(:cbase + :maxclients, :cmax)`)
	b.query("SessionGetBatch", sessionArgs("''"), true)
	b.query("MembershipRoleGet", nil, false)
	b.query("CreativePageSearch", map[string]string{
		"title_pattern": "'%' || :n || '%'", "statuses": ":nostatus", "author_id": "NULL", "reviewer_id": "NULL",
	}, false)
	b.query("CreativeVersionsWithAssets", map[string]string{"ids": ":vids"}, false)
}
