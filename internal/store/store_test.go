package store_test

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// catalog lists every column, constraint, index, trigger and function of
// the public schema, except the migration bookkeeping table.
const catalog = `
SELECT 'col ' || table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
UNION ALL
SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
UNION ALL
SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'schema_migrations'
UNION ALL
SELECT 'trg ' || tgrelid::regclass || ' ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
UNION ALL
SELECT 'fn ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
ORDER BY 1`

func TestMigrationsProduceExactlySchemaSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	migrated := testenv.NewDB(t) // cloned from the migrated template
	fromSchema := testenv.NewEmptyDB(t)
	schema, err := os.ReadFile("../../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fromSchema.Pool.Exec(ctx, string(schema)); err != nil {
		t.Fatalf("apply schema.sql: %v", err)
	}
	want := rows(t, fromSchema)
	got := rows(t, migrated)
	if len(want) < 50 {
		t.Fatalf("catalog query found only %d objects", len(want))
	}
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Fatalf("first difference at %d:\n schema.sql:  %s\n migrations:  %s", i, w, g)
		}
	}
}

func rows(t *testing.T, d *testenv.DB) []string {
	t.Helper()
	rs, err := d.Pool.Query(context.Background(), catalog)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigration0003StoresEveryEmailInItsNormalisedForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewEmptyDB(t)
	// The schema as 0001 left it, with emails as users typed them.
	init, err := fs.ReadFile(migrations.FS, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, string(init)+`;
		CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO schema_migrations (version) VALUES ('0001_init');
		INSERT INTO users (email, name, password_hash) VALUES
			('Ada@Example.TEST', 'Ada', 'x'), ('v`+"\u0130"+`ewer@acme.test', 'Lookalike', 'x'), ('plain@example.test', 'Plain', 'x')`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, d.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var emails []string
	rows, err := d.Pool.Query(ctx, "SELECT email FROM users ORDER BY email")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		emails = append(emails, e)
	}
	want := []string{"ada@example.test", "plain@example.test", "v\u0130ewer@acme.test"}
	if !slices.Equal(emails, want) {
		t.Fatalf("emails %q, want %q", emails, want)
	}
	// Only the normalised form is unique now: the lookalike stays apart
	// from viewer@acme.test.
	if _, err := d.Pool.Exec(ctx, "INSERT INTO users (email, name, password_hash) VALUES ('viewer@acme.test', 'Vic', 'x')"); err != nil {
		t.Fatalf("viewer@acme.test beside its lookalike: %v", err)
	}
	if _, err := d.Pool.Exec(ctx, "INSERT INTO users (email, name, password_hash) VALUES ('ada@example.test', 'Ada again', 'x')"); err == nil {
		t.Fatal("a second ada@example.test was stored")
	}
}

// TestMigration0022FailsUploadsPendingFromBefore: an upload pending when
// staging came wrote its final key through its URLs, so it fails (the
// sweep then empties its keys); a ready one stays ready, and both are
// left for the sweep.
func TestMigration0022FailsUploadsPendingFromBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewEmptyDB(t)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	setup := "CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
	for _, name := range names {
		if name >= "0022" {
			break
		}
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		setup += string(sql) + ";\nINSERT INTO schema_migrations (version) VALUES ('" + name[:len(name)-len(".sql")] + "');\n"
	}
	if _, err := d.Pool.Exec(ctx, setup+`
		INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Org', 'org');
		INSERT INTO users (id, email, name, password_hash) VALUES ('00000000-0000-0000-0000-0000000000b1', 'u@example.test', 'U', 'x');
		INSERT INTO uploads (id, organization_id, created_by, status, file_name, mime_type, size_bytes, sha256, part_size, object_key, expires_at, asset_id, finished_at)
		VALUES ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'pending',
		        'a.png', 'image/png', 10, repeat('a', 64), 8388608, 'uploads/pending', now() + interval '1 hour', NULL, NULL),
		       ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'ready',
		        'b.png', 'image/png', 10, repeat('b', 64), 8388608, 'uploads/ready', now() + interval '1 hour', gen_random_uuid(), now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, d.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	rows, err := d.Pool.Query(ctx, "SELECT object_key, status, finished_at IS NOT NULL, swept_at IS NULL FROM uploads ORDER BY object_key")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var key, status string
		var finished, unswept bool
		if err := rows.Scan(&key, &status, &finished, &unswept); err != nil {
			t.Fatal(err)
		}
		if !finished || !unswept {
			t.Errorf("%s: finished %v, not swept %v", key, finished, unswept)
		}
		got = append(got, key+" "+status)
	}
	if want := []string{"uploads/pending failed", "uploads/ready ready"}; !slices.Equal(got, want) {
		t.Fatalf("uploads %q, want %q", got, want)
	}
}

// TestMigration0029GivesAnUploadedFileItsUploadsAssetID: the assets of
// versions made from an upload before 0029 take the upload's asset id
// (one file, one id), comment anchors that named their old ids follow
// them, a second copy of one upload in one version keeps its own id, and
// a URL asset is left alone.
func TestMigration0029GivesAnUploadedFileItsUploadsAssetID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewEmptyDB(t)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	setup := "CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
	for _, name := range names {
		if name >= "0029" {
			break
		}
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		setup += string(sql) + ";\nINSERT INTO schema_migrations (version) VALUES ('" + name[:len(name)-len(".sql")] + "');\n"
	}
	// Upload u1 (asset a1) is in versions v1 and v2 (twice in v2); v1 also
	// has a URL asset. Comments anchor to v1's and v2's copies.
	if _, err := d.Pool.Exec(ctx, setup+`
		INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Org', 'org');
		INSERT INTO users (id, email, name, password_hash) VALUES ('00000000-0000-0000-0000-0000000000b1', 'u@example.test', 'U', 'x');
		INSERT INTO uploads (id, organization_id, created_by, status, file_name, mime_type, size_bytes, sha256, part_size, object_key, expires_at, asset_id, finished_at)
		VALUES ('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'ready',
		        'a.png', 'image/png', 10, repeat('a', 64), 8388608, 'uploads/a', now() + interval '1 hour', '00000000-0000-0000-0000-0000000000a0', now());
		INSERT INTO creatives (id, organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		VALUES ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000a1', 1, 'C', 'static', '1:1', 'US', 'en-US', '00000000-0000-0000-0000-0000000000b1');
		INSERT INTO creative_versions (id, creative_id, number, author_id)
		VALUES ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000d1', 1, '00000000-0000-0000-0000-0000000000b1'),
		       ('00000000-0000-0000-0000-0000000000e2', '00000000-0000-0000-0000-0000000000d1', 2, '00000000-0000-0000-0000-0000000000b1');
		INSERT INTO assets (id, version_id, position, file_name, mime_type, size_bytes, url, sha256, upload_id)
		VALUES ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-0000000000e1', 1, 'a.png', 'image/png', 10, 'x', repeat('a', 64), '00000000-0000-0000-0000-0000000000c1'),
		       ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-0000000000e1', 2, 'b.png', 'image/png', 10, 'https://cdn.test/b.png', repeat('b', 64), NULL),
		       ('00000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-0000000000e2', 1, 'a.png', 'image/png', 10, 'x', repeat('a', 64), '00000000-0000-0000-0000-0000000000c1'),
		       ('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-0000000000e2', 2, 'a.png', 'image/png', 10, 'x', repeat('a', 64), '00000000-0000-0000-0000-0000000000c1');
		INSERT INTO comments (creative_id, version_id, version_number, author_id, body, anchor)
		VALUES ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000e1', 1, '00000000-0000-0000-0000-0000000000b1', 'one',
		        '{"assetId": "00000000-0000-0000-0000-000000000001", "page": null}'),
		       ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000e2', 2, '00000000-0000-0000-0000-0000000000b1', 'two',
		        '{"assetId": "00000000-0000-0000-0000-000000000003", "page": null}'),
		       ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000e1', 1, '00000000-0000-0000-0000-0000000000b1', 'url',
		        '{"assetId": "00000000-0000-0000-0000-000000000002", "page": null}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, d.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var assets, anchors []string
	rows, err := d.Pool.Query(ctx, `SELECT right(version_id::text, 2) || ':' || position || ' ' || right(id::text, 2) FROM assets ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		assets = append(assets, s)
	}
	rows, err = d.Pool.Query(ctx, `SELECT body || ' ' || right(anchor ->> 'assetId', 2) || ' ' || (anchor ? 'page') FROM comments ORDER BY body`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		anchors = append(anchors, s)
	}
	if want := []string{"e1:1 a0", "e1:2 02", "e2:1 a0", "e2:2 04"}; !slices.Equal(assets, want) {
		t.Errorf("assets (version:position id) %q, want %q", assets, want)
	}
	if want := []string{"one a0 true", "two a0 true", "url 02 true"}; !slices.Equal(anchors, want) {
		t.Errorf("comment anchors %q, want %q", anchors, want)
	}
}

// TestMigration0041NarrowsDecideSharesNotMadeByAnAdmin: a decide share
// whose creator is not an admin of its organization (an author, an admin
// of another organization, a former member) becomes a comment share with
// an audit entry; an admin's decide share and every other share stay as
// they are, without one.
func TestMigration0041NarrowsDecideSharesNotMadeByAnAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewEmptyDB(t)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	setup := "CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
	for _, name := range names {
		if name >= "0041" {
			break
		}
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		setup += string(sql) + ";\nINSERT INTO schema_migrations (version) VALUES ('" + name[:len(name)-len(".sql")] + "');\n"
	}
	// Org a1: b1 admin, b2 author, b3 admin of a2 only, b4 no member.
	// Shares: c1 decide by the admin, c2 decide by the author, c3 decide
	// by another org's admin, c4 decide by a former member (revoked), c5
	// comment by the author, c6 view by the author.
	if _, err := d.Pool.Exec(ctx, setup+`
		INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Org', 'org'),
		                                                  ('00000000-0000-0000-0000-0000000000a2', 'Other', 'other');
		INSERT INTO users (id, email, name, password_hash) VALUES
			('00000000-0000-0000-0000-0000000000b1', 'admin@example.test', 'Admin', 'x'),
			('00000000-0000-0000-0000-0000000000b2', 'author@example.test', 'Author', 'x'),
			('00000000-0000-0000-0000-0000000000b3', 'other@example.test', 'Other admin', 'x'),
			('00000000-0000-0000-0000-0000000000b4', 'gone@example.test', 'Gone', 'x');
		INSERT INTO memberships (organization_id, user_id, role) VALUES
			('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'admin'),
			('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b2', 'author'),
			('00000000-0000-0000-0000-0000000000a2', '00000000-0000-0000-0000-0000000000b3', 'admin');
		INSERT INTO shares (id, organization_id, token_hash, permission, expires_at, created_by, revoked_at)
		SELECT ('00000000-0000-0000-0000-0000000000c' || n)::uuid, '00000000-0000-0000-0000-0000000000a1',
		       sha256(n::text::bytea), p, now() + interval '1 day', ('00000000-0000-0000-0000-0000000000b' || b)::uuid,
		       CASE WHEN n = 4 THEN now() END
		FROM (VALUES (1, 'decide', 1), (2, 'decide', 2), (3, 'decide', 3), (4, 'decide', 4), (5, 'comment', 2), (6, 'view', 2)) AS v(n, p, b)`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, d.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var shares, audit []string
	rows, err := d.Pool.Query(ctx, "SELECT right(id::text, 2) || ' ' || permission FROM shares ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if shares, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if want := []string{"c1 decide", "c2 comment", "c3 comment", "c4 comment", "c5 comment", "c6 view"}; !slices.Equal(shares, want) {
		t.Fatalf("shares %q, want %q", shares, want)
	}
	rows, err = d.Pool.Query(ctx, `
		SELECT right(target_id::text, 2) || ' ' || action || ' ' || target_type || ' ' || (actor_id IS NULL) || ' '
		       || (details ->> 'from') || '>' || (details ->> 'to') || ' ' || right(details ->> 'createdBy', 2)
		FROM audit_log WHERE organization_id = '00000000-0000-0000-0000-0000000000a1' ORDER BY target_id`)
	if err != nil {
		t.Fatal(err)
	}
	if audit, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"c2 share.permission_changed share true decide>comment b2",
		"c3 share.permission_changed share true decide>comment b3",
		"c4 share.permission_changed share true decide>comment b4",
	}
	if !slices.Equal(audit, want) {
		t.Fatalf("audit log %q, want %q", audit, want)
	}
	if _, err := d.Pool.Exec(ctx, "UPDATE audit_log SET action = 'x'"); err == nil {
		t.Fatal("an audit entry was changed")
	}
}

// TestMigration0043GivesPendingUploadsTheHourRule: an upload pending when
// 0043 runs keeps its reservation an hour at most (not the day it was
// given), and a ready one is left alone.
func TestMigration0043GivesPendingUploadsTheHourRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewEmptyDB(t)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	setup := "CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
	for _, name := range names {
		if name >= "0043" {
			break
		}
		sql, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		setup += string(sql) + ";\nINSERT INTO schema_migrations (version) VALUES ('" + name[:len(name)-len(".sql")] + "');\n"
	}
	if _, err := d.Pool.Exec(ctx, setup+`
		INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-0000-0000-0000000000a1', 'Org', 'org');
		INSERT INTO users (id, email, name, password_hash) VALUES ('00000000-0000-0000-0000-0000000000b1', 'u@example.test', 'U', 'x');
		INSERT INTO uploads (id, organization_id, created_by, status, file_name, mime_type, size_bytes, sha256, part_size, object_key, expires_at, asset_id, finished_at)
		VALUES ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'pending',
		        'a.png', 'image/png', 10, repeat('a', 64), 8388608, 'uploads/pending', now() + interval '20 hours', NULL, NULL),
		       ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'ready',
		        'b.png', 'image/png', 10, repeat('b', 64), 8388608, 'uploads/ready', now() + interval '20 hours', gen_random_uuid(), now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Migrate(ctx, d.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	var pendingWithinHour, readyUntouched bool
	if err := d.Pool.QueryRow(ctx, `SELECT
		(SELECT expires_at <= now() + interval '1 hour' FROM uploads WHERE object_key = 'uploads/pending'),
		(SELECT expires_at > now() + interval '19 hours' FROM uploads WHERE object_key = 'uploads/ready')`).Scan(&pendingWithinHour, &readyUntouched); err != nil {
		t.Fatal(err)
	}
	if !pendingWithinHour || !readyUntouched {
		t.Fatalf("pending within the hour %v, ready untouched %v", pendingWithinHour, readyUntouched)
	}
}
