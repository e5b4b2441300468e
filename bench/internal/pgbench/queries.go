// Package pgbench writes pgbench scripts that send exactly the statements a
// command of the server sends: the sqlc queries of queries/*.sql, in the
// same order, with BEGIN and COMMIT where the server has them. Running them
// at the server's concurrency gives the database's own limit for that work.
package pgbench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Queries are the sqlc queries by name, in pgbench's variable syntax.
type Queries map[string]Query

// Query is one sqlc query: its text with each parameter written :name.
type Query struct {
	Name string
	SQL  string
	// Params are the query's parameter names, in first-use order.
	Params []string
}

// LoadQueries reads every queries/*.sql file under dir.
func LoadQueries(dir string) (Queries, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no query files in %s", dir)
	}
	sort.Strings(files)
	qs := Queries{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := qs.parse(string(b)); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return qs, nil
}

var (
	namedParam = regexp.MustCompile(`@([a-z_][a-z0-9_]*)`)
	macroParam = regexp.MustCompile(`sqlc\.n?arg\('?([a-z_][a-z0-9_]*)'?\)`)
	embed      = regexp.MustCompile(`sqlc\.embed\(([a-z_][a-z0-9_]*)\)`)
	variable   = regexp.MustCompile(`(?:^|[^:]):([a-z_][a-z0-9_]*)`)
)

// parse adds the queries of one file: each starts at a "-- name: X :kind"
// line; comment lines are dropped (pgbench would read ":one" in them as a
// variable), and sqlc's parameter forms become pgbench variables.
func (qs Queries) parse(file string) error {
	var name string
	var body []string
	flush := func() error {
		if name == "" {
			return nil
		}
		sql := strings.TrimSuffix(strings.TrimSpace(strings.Join(body, "\n")), ";")
		sql = embed.ReplaceAllString(sql, "$1.*")
		sql = macroParam.ReplaceAllString(sql, ":$1")
		sql = namedParam.ReplaceAllString(sql, ":$1")
		q := Query{Name: name, SQL: sql}
		seen := map[string]bool{}
		for _, m := range variable.FindAllStringSubmatch(sql, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				q.Params = append(q.Params, m[1])
			}
		}
		if _, dup := qs[name]; dup {
			return fmt.Errorf("query %s defined twice", name)
		}
		qs[name] = q
		return nil
	}
	for _, line := range strings.Split(file, "\n") {
		trimmed := strings.TrimSpace(line)
		if f := strings.Fields(trimmed); len(f) >= 3 && f[0] == "--" && f[1] == "name:" {
			if err := flush(); err != nil {
				return err
			}
			name, body = f[2], nil
			continue
		}
		if strings.HasPrefix(trimmed, "--") || name == "" {
			continue
		}
		body = append(body, line)
	}
	return flush()
}

// With returns the query's text with some parameters replaced by pgbench
// expressions (a literal, NULL, or an expression over variables). It fails
// on a name the query does not have, so a renamed parameter is noticed.
func (q Query) With(args map[string]string) (string, error) {
	for name := range args {
		if !strings.Contains(q.SQL, ":"+name) {
			return "", fmt.Errorf("%s has no parameter %s", q.Name, name)
		}
	}
	out := variable.ReplaceAllStringFunc(q.SQL, func(m string) string {
		i := strings.Index(m, ":")
		if expr, ok := args[m[i+1:]]; ok {
			return m[:i] + expr
		}
		return m
	})
	return out, nil
}

// Positional is the query as a Go client sends it: each parameter written
// $n, numbered in the order of params, which must be the query's own
// parameters in first-use order (so a renamed or reordered parameter fails
// here instead of binding the wrong value). The first line names the query
// as sqlc's output does, so a query tracer names it the same way.
func (q Query) Positional(params ...string) (string, error) {
	if strings.Join(params, ",") != strings.Join(q.Params, ",") {
		return "", fmt.Errorf("%s takes (%s), not (%s)", q.Name, strings.Join(q.Params, ", "), strings.Join(params, ", "))
	}
	n := map[string]int{}
	for i, p := range params {
		n[p] = i + 1
	}
	sql := variable.ReplaceAllStringFunc(q.SQL, func(m string) string {
		i := strings.Index(m, ":")
		return m[:i] + "$" + strconv.Itoa(n[m[i+1:]])
	})
	return "-- name: " + q.Name + "\n" + sql, nil
}
