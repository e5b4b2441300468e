// Package statemachine is the one shape of the state machines whose moves
// are SQL statements: a table of rules, each a move from some states to
// others, made by someone, through one statement. Deposits and transfers
// (internal/deposit) and uploads (internal/upload) are tables of it, and
// each package's tests hold the statements to its rules. The review's
// table (internal/review) is a rights table first: who may act, and a
// next state computed from the current one, so it has its own shape.
package statemachine

import "slices"

// Rule is one row of a state machine's table.
type Rule[S ~string, A ~string] struct {
	// From lists the states the move is made from, explicitly, so an
	// unknown stored status is refused rather than allowed.
	From []S
	// To lists the states the move may lead to; which one is the judgement
	// of the function making it.
	To []S
	// By is who makes the move.
	By A
	// Query is the statement (queries/*.sql) that makes it.
	Query string
}

// Applies reports whether the move may be made from state from.
func (r Rule[S, A]) Applies(from S) bool { return slices.Contains(r.From, from) }

// Allows reports whether the move may take state from to state to.
func (r Rule[S, A]) Allows(from, to S) bool { return r.Applies(from) && slices.Contains(r.To, to) }
