package deposit

import (
	"fmt"

	"creativeapi/internal/statemachine"
)

// TransferStatus is what a transfer to the treasury is recorded as
// (chain_transfers.status). It is the one type of transfer statuses: the
// watcher's verdicts, the settlements and the metrics' labels are these.
type TransferStatus string

// The transfer states (docs/deposits.md, "States").
const (
	// TransferUnseen is the state before a transfer is recorded; it is
	// never stored.
	TransferUnseen TransferStatus = ""
	// TransferConfirming pays an on-time deposit and waits for its block
	// to be solidified.
	TransferConfirming TransferStatus = "confirming"
	// TransferCredited paid its deposit.
	TransferCredited TransferStatus = "credited"
	// TransferLate is for a deposit whose expiry came before its block.
	TransferLate TransferStatus = "late"
	// TransferUnmatched pays no deposit; its reason says why.
	TransferUnmatched TransferStatus = "unmatched"
	// TransferFailed has a failed receipt.
	TransferFailed TransferStatus = "failed"
	// TransferVanished is no longer known to the node (a fork); it is
	// judged again if the chain shows it again.
	TransferVanished TransferStatus = "vanished"
	// TransferRefunded was sent back by an operator.
	TransferRefunded TransferStatus = "refunded"
)

// TransferStatuses lists every stored transfer state.
var TransferStatuses = []TransferStatus{
	TransferConfirming, TransferCredited, TransferLate, TransferUnmatched,
	TransferFailed, TransferVanished, TransferRefunded,
}

// Recorded lists the states a newly recorded transfer can be in (Record's
// targets), in the order the watcher's metrics report them.
var Recorded = []TransferStatus{TransferConfirming, TransferLate, TransferUnmatched, TransferFailed}

// NeedsReview reports whether a transfer in s waits for an operator.
func (s TransferStatus) NeedsReview() bool {
	return s == TransferLate || s == TransferUnmatched
}

// Actor is who makes a move.
type Actor string

// The actors of the ledger.
const (
	// ByWatcher: the chain watcher, from what it read on the chain.
	ByWatcher Actor = "watcher"
	// BySweeper: the sweeper, from the clock.
	BySweeper Actor = "sweeper"
	// ByOperator: a platform operator settling a transfer.
	ByOperator Actor = "operator"
	// ByPayer: the deposit's owner, naming the transfer that paid it.
	ByPayer Actor = "payer"
	// ByPolicy: the shortfall tolerance, crediting with no operator a
	// transfer that carries a deposit's fingerprint and is short of it by
	// no more than the tolerance (Tolerance, Fingerprint).
	ByPolicy Actor = "policy"
)

// Move names a status change of a deposit or a transfer. Each is made by
// one function of this package and one SQL statement (Rule.Query).
type Move string

// The deposit moves.
const (
	// MoveMatch: an on-time transfer is seen; the deposit counts
	// confirmations (even past expiresAt: the payer was on time).
	MoveMatch Move = "match"
	// MoveCount: the deposit's confirmations change.
	MoveCount Move = "count"
	// MoveRevert: the transfer failed or vanished; the deposit waits again,
	// or is expired past expiresAt.
	MoveRevert Move = "revert"
	// MoveCredit: the transfer is solidified with enough confirmations.
	MoveCredit Move = "credit"
	// MoveCreditLate: an operator credits a late transfer.
	MoveCreditLate Move = "credit_late"
	// MoveExpire: no transfer came before expiresAt.
	MoveExpire Move = "expire"
	// MoveAttachLate: the exact amount arrived after expiresAt, inside the
	// monitoring window; the watcher attaches it and an operator settles it.
	MoveAttachLate Move = "attach_late"
	// MoveRefund: an operator sent the attached transfer back.
	MoveRefund Move = "refund"
	// MoveClaim: the payer names an unmatched transfer (another amount) as
	// theirs; the deposit waits for an operator, whatever the amount (a
	// claim never credits: transaction ids are public).
	MoveClaim Move = "claim"
	// MoveLoseClaim: an operator settled a transfer several deposits
	// claimed for one of them; the others wait again, or are expired past
	// expiresAt.
	MoveLoseClaim Move = "lose_claim"
	// MoveAttachMismatch: a transfer carries the fingerprint of exactly one
	// deposit but is short beyond the tolerance, or above the requested
	// amount; the watcher attaches it and the deposit waits under review
	// (the payer may top it up, an operator settles an overpayment).
	MoveAttachMismatch Move = "attach_mismatch"
	// MoveCancel: the payer cancels a deposit awaiting its transfer; it is
	// final and its amount is released at once.
	MoveCancel Move = "cancel"
	// MoveCreditPolicy: a confirming transfer that carries the deposit's
	// fingerprint, short by no more than the tolerance, is final; the
	// deposit is credited with the amount received and keeps its review
	// (amount_mismatch), the audit record naming PolicyOperator.
	MoveCreditPolicy Move = "credit_policy"
	// MoveTopUp: the payer of a deposit under review for a transfer the
	// watcher attached by its fingerprint, short beyond the tolerance,
	// reserves the rest (TopUp; never for a claimed transfer): a top-up, a deposit of
	// its own, takes the shortfall plus a suffix; the deposit stays under
	// review and shows it.
	MoveTopUp Move = "top_up"
	// MovePayTopUp: a top-up's transfer, on time, is final; the top-up is
	// credited (with 0 when its deposit takes the money in, MoveCreditTopUp).
	MovePayTopUp Move = "pay_top_up"
	// MoveCreditTopUp: with MovePayTopUp, the deposit under review the
	// top-up completes is credited with the sum of both transfers.
	MoveCreditTopUp Move = "credit_top_up"
	// MoveReject: an operator decides the attached transfer does not pay
	// the deposit (with MoveSettleReject); the deposit waits again, or is
	// expired past expiresAt.
	MoveReject Move = "reject"
)

// The transfer moves.
const (
	// MoveRecord: a transfer is judged and recorded (again, when it had
	// vanished and the chain shows it again).
	MoveRecord Move = "record"
	// MoveRecount: a confirming transfer's block is read again (a fork may
	// have moved it).
	MoveRecount Move = "recount"
	// MoveEnd: a confirming transfer failed, vanished, or cannot credit its
	// deposit (then unmatched, for an operator).
	MoveEnd Move = "end"
	// MoveMarkCredited: the transfer paid its deposit (with MoveCredit).
	MoveMarkCredited Move = "mark_credited"
	// MoveSettleCredit: an operator credits a late transfer, or an
	// unmatched one a payer claimed for their deposit (with MoveCreditLate).
	MoveSettleCredit Move = "settle_credit"
	// MoveSettleRefund: an operator records that the treasury sent a late
	// or unmatched transfer back.
	MoveSettleRefund Move = "settle_refund"
	// MoveSettleReject: an operator detaches a late or claimed transfer
	// from its deposit (with MoveReject); it is unmatched again and still
	// waits for review, for another claim or a refund.
	MoveSettleReject Move = "settle_reject"
	// MoveSettlePolicy: a transfer the watcher attached by its fingerprint
	// is settled as credited once a top-up completed its deposit (with
	// MoveCreditTopUp); its audit record names PolicyOperator.
	MoveSettlePolicy Move = "settle_policy"
)

// Decision is an operator's settlement of a transfer waiting for review,
// in the one word the API's request and record, the CLI and the audit
// table (chain_transfer_settlements.decision) all use.
type Decision string

// The decisions (docs/deposits.md, "Settling by hand").
const (
	DecisionCredit Decision = "credit"
	DecisionRefund Decision = "refund"
	DecisionReject Decision = "reject"
)

// Settlements maps each decision to the transfer move that makes it.
var Settlements = map[Decision]Move{
	DecisionCredit: MoveSettleCredit,
	DecisionRefund: MoveSettleRefund,
	DecisionReject: MoveSettleReject,
}

// DecisionOf is the decision that move m makes, or "" when m is no
// settlement.
func DecisionOf(m Move) Decision {
	for d, dm := range Settlements {
		if dm == m {
			return d
		}
	}
	return ""
}

// Rule is one row of the deposits' and transfers' tables; each Query's
// conditions are held equal to From by TestMachineIsOneRuleInSQLAndGo.
type Rule[S ~string] = statemachine.Rule[S, Actor]

// DepositMoves is the deposits' state machine. Every deposit status change
// is one of these moves.
//
//	move         from                                 to                             by        statement
//	match        awaiting_transfer, expired           confirming                     watcher   ChainTransfersRecord
//	count        confirming                           confirming                     watcher   ChainConfirmationsSet
//	revert       confirming                           awaiting_transfer, expired     watcher   ChainTransfersRevert
//	credit       awaiting_transfer, confirming        credited                       watcher   DepositCredit
//	credit_late  awaiting_transfer, confirming,       credited                       operator  DepositCredit (late)
//	             expired, under_review
//	expire       awaiting_transfer                    expired                        sweeper   DepositExpire
//	attach_late  awaiting_transfer, expired           under_review                   watcher   ChainTransfersRecord
//	refund       under_review                         refunded                       operator  ChainTransferSettle
//	claim        awaiting_transfer, expired           under_review                   payer     DepositClaim
//	lose_claim   under_review                         awaiting_transfer, expired     operator  DepositClaimsLose
//	attach_mismatch awaiting_transfer, expired        under_review                   watcher   ChainTransfersRecord
//	reject       under_review                         awaiting_transfer, expired     operator  ChainTransferReject
//	credit_policy confirming                          credited                       policy    DepositCredit (fingerprint)
//	cancel       awaiting_transfer                    cancelled                      payer     DepositCancel
//	top_up       under_review                         under_review                   payer     DepositTopUp
//	pay_top_up   awaiting_transfer, confirming        credited                       watcher   DepositCreditTopUp
//	credit_top_up under_review                        credited                       watcher   DepositCreditTopUp
//
// A top-up is a deposit of its own (top_up_of) and moves like one: match,
// count, revert, expire, attach_late; pay_top_up credits it.
// A deposit awaiting its transfer past expiresAt reads as expired
// (EffectiveStatus) and is no longer open: credit refuses it, match and
// credit_late do not. A confirming deposit takes credit_late only for its
// own transaction, which is never late.
var DepositMoves = map[Move]Rule[Status]{
	MoveMatch:          {From: []Status{StatusAwaitingTransfer, StatusExpired}, To: []Status{StatusConfirming}, By: ByWatcher, Query: "ChainTransfersRecord"},
	MoveCount:          {From: []Status{StatusConfirming}, To: []Status{StatusConfirming}, By: ByWatcher, Query: "ChainConfirmationsSet"},
	MoveRevert:         {From: []Status{StatusConfirming}, To: []Status{StatusAwaitingTransfer, StatusExpired}, By: ByWatcher, Query: "ChainTransfersRevert"},
	MoveCredit:         {From: []Status{StatusAwaitingTransfer, StatusConfirming}, To: []Status{StatusCredited}, By: ByWatcher, Query: "DepositCredit"},
	MoveCreditLate:     {From: []Status{StatusAwaitingTransfer, StatusConfirming, StatusExpired, StatusUnderReview}, To: []Status{StatusCredited}, By: ByOperator, Query: "DepositCredit"},
	MoveExpire:         {From: []Status{StatusAwaitingTransfer}, To: []Status{StatusExpired}, By: BySweeper, Query: "DepositExpire"},
	MoveAttachLate:     {From: []Status{StatusAwaitingTransfer, StatusExpired}, To: []Status{StatusUnderReview}, By: ByWatcher, Query: "ChainTransfersRecord"},
	MoveRefund:         {From: []Status{StatusUnderReview}, To: []Status{StatusRefunded}, By: ByOperator, Query: "ChainTransferSettle"},
	MoveClaim:          {From: []Status{StatusAwaitingTransfer, StatusExpired}, To: []Status{StatusUnderReview}, By: ByPayer, Query: "DepositClaim"},
	MoveLoseClaim:      {From: []Status{StatusUnderReview}, To: []Status{StatusAwaitingTransfer, StatusExpired}, By: ByOperator, Query: "DepositClaimsLose"},
	MoveAttachMismatch: {From: []Status{StatusAwaitingTransfer, StatusExpired}, To: []Status{StatusUnderReview}, By: ByWatcher, Query: "ChainTransfersRecord"},
	MoveReject:         {From: []Status{StatusUnderReview}, To: []Status{StatusAwaitingTransfer, StatusExpired}, By: ByOperator, Query: "ChainTransferReject"},
	MoveCreditPolicy:   {From: []Status{StatusConfirming}, To: []Status{StatusCredited}, By: ByPolicy, Query: "DepositCredit"},
	MoveCancel:         {From: []Status{StatusAwaitingTransfer}, To: []Status{StatusCancelled}, By: ByPayer, Query: "DepositCancel"},
	MoveTopUp:          {From: []Status{StatusUnderReview}, To: []Status{StatusUnderReview}, By: ByPayer, Query: "DepositTopUp"},
	MovePayTopUp:       {From: []Status{StatusAwaitingTransfer, StatusConfirming}, To: []Status{StatusCredited}, By: ByWatcher, Query: "DepositCreditTopUp"},
	MoveCreditTopUp:    {From: []Status{StatusUnderReview}, To: []Status{StatusCredited}, By: ByWatcher, Query: "DepositCreditTopUp"},
}

// TransferMoves is the transfers' state machine. Every transfer status
// change is one of these moves.
//
//	move           from                 to                                  by        statement
//	record         (unseen), vanished   confirming, late, unmatched, failed watcher   ChainTransfersRecord
//	recount        confirming           confirming                          watcher   ChainConfirmationsSet
//	end            confirming           failed, vanished, unmatched         watcher   ChainTransfersRevert
//	mark_credited  confirming           credited                            watcher   ChainTransferCredited
//	settle_credit  late, unmatched      credited                            operator  ChainTransferSettle
//	               (claimed)
//	settle_refund  late, unmatched      refunded                            operator  ChainTransferSettle
//	settle_reject  late, unmatched      unmatched                           operator  ChainTransferReject
//	               (attached)
//	settle_policy  late, unmatched      credited                            policy    ChainTransferSettle
//	               (attached by fingerprint, completed by a top-up)
var TransferMoves = map[Move]Rule[TransferStatus]{
	MoveRecord:       {From: []TransferStatus{TransferUnseen, TransferVanished}, To: Recorded, By: ByWatcher, Query: "ChainTransfersRecord"},
	MoveRecount:      {From: []TransferStatus{TransferConfirming}, To: []TransferStatus{TransferConfirming}, By: ByWatcher, Query: "ChainConfirmationsSet"},
	MoveEnd:          {From: []TransferStatus{TransferConfirming}, To: []TransferStatus{TransferFailed, TransferVanished, TransferUnmatched}, By: ByWatcher, Query: "ChainTransfersRevert"},
	MoveMarkCredited: {From: []TransferStatus{TransferConfirming}, To: []TransferStatus{TransferCredited}, By: ByWatcher, Query: "ChainTransferCredited"},
	MoveSettleCredit: {From: []TransferStatus{TransferLate, TransferUnmatched}, To: []TransferStatus{TransferCredited}, By: ByOperator, Query: "ChainTransferSettle"},
	MoveSettleRefund: {From: []TransferStatus{TransferLate, TransferUnmatched}, To: []TransferStatus{TransferRefunded}, By: ByOperator, Query: "ChainTransferSettle"},
	MoveSettleReject: {From: []TransferStatus{TransferLate, TransferUnmatched}, To: []TransferStatus{TransferUnmatched}, By: ByOperator, Query: "ChainTransferReject"},
	MoveSettlePolicy: {From: []TransferStatus{TransferLate, TransferUnmatched}, To: []TransferStatus{TransferCredited}, By: ByPolicy, Query: "ChainTransferSettle"},
}

// Refusal is the error of a move the table does not allow; its Problem
// code is invalid_transition.
type Refusal struct {
	Move     Move
	From, To string
}

func (r *Refusal) Error() string {
	to := r.To
	if to == "" {
		to = "anything"
	}
	from := r.From
	if from == "" {
		from = "(unseen)"
	}
	return fmt.Sprintf("invalid_transition: %s does not move %s to %s", r.Move, from, to)
}

// CheckDeposit returns nil when move m may take a deposit from status
// from to status to, else a *Refusal.
func CheckDeposit(m Move, from, to Status) error { return check(DepositMoves, m, from, to) }

// CheckTransfer returns nil when move m may take a transfer from status
// from to status to, else a *Refusal.
func CheckTransfer(m Move, from, to TransferStatus) error { return check(TransferMoves, m, from, to) }

// DecideTransfer returns the states move m may take a transfer in from to,
// or a *Refusal when it does not apply there.
func DecideTransfer(m Move, from TransferStatus) ([]TransferStatus, error) {
	r, ok := TransferMoves[m]
	if !ok || !r.Applies(from) {
		return nil, &Refusal{Move: m, From: string(from)}
	}
	return r.To, nil
}

// DecideDeposit returns the states move m may take a deposit in from to,
// or a *Refusal when it does not apply there.
func DecideDeposit(m Move, from Status) ([]Status, error) {
	r, ok := DepositMoves[m]
	if !ok || !r.Applies(from) {
		return nil, &Refusal{Move: m, From: string(from)}
	}
	return r.To, nil
}

func check[S ~string](table map[Move]Rule[S], m Move, from, to S) error {
	r, ok := table[m]
	if !ok || !r.Allows(from, to) {
		return &Refusal{Move: m, From: string(from), To: string(to)}
	}
	return nil
}
