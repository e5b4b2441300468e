package creative

import (
	"strconv"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/jsontext"
)

// AppendJSON appends d as encoding/json writes it (members in the order of
// Detail's fields, nil as null), without its reflection: a page of
// creatives written through json.Marshal spent most of its time there
// (BenchmarkCreativePageEncoding in internal/httpapi measures both).
// httpapi's TestCreativeEncodingIsTheGeneratedOneByteForByte holds the bytes
// equal to the generated response's, and TestDetailJSON to json.Marshal's.
// It is no MarshalJSON method on purpose: eventData embeds Detail and
// shadows two of its fields, which a promoted MarshalJSON would ignore.
func (d *Detail) AppendJSON(b []byte) []byte {
	b = append(b, `{"approvedVersion":`...)
	b = d.ApprovedVersion.appendJSON(b)
	b = append(b, `,"aspectRatio":`...)
	b = jsontext.AppendString(b, d.AspectRatio)
	b = append(b, `,"author":`...)
	b = appendUserRef(b, d.Author)
	b = append(b, `,"availableActions":`...)
	if d.AvailableActions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range d.AvailableActions {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, string(a))
		}
		b = append(b, ']')
	}
	b = append(b, `,"client":`...)
	b = appendNamedRef(b, d.Client)
	b = append(b, `,"currentVersion":`...)
	b = d.CurrentVersion.appendJSON(b)
	b = append(b, `,"directionId":`...)
	if d.DirectionId == nil {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendUUID(b, *d.DirectionId)
	}
	b = append(b, `,"geo":`...)
	b = jsontext.AppendString(b, d.Geo)
	b = append(b, `,"id":`...)
	b = jsontext.AppendUUID(b, d.Id)
	b = append(b, `,"language":`...)
	b = jsontext.AppendString(b, d.Language)
	b = append(b, `,"number":`...)
	b = jsontext.AppendString(b, d.Number)
	b = append(b, `,"openCommentCount":`...)
	b = strconv.AppendInt(b, int64(d.OpenCommentCount), 10)
	b = append(b, `,"openThreadCount":`...)
	b = strconv.AppendInt(b, int64(d.OpenThreadCount), 10)
	b = append(b, `,"permissions":{"addVersion":`...)
	b = strconv.AppendBool(b, d.Permissions.AddVersion)
	b = append(b, `,"assignReviewer":`...)
	b = strconv.AppendBool(b, d.Permissions.AssignReviewer)
	b = append(b, `,"edit":`...)
	b = strconv.AppendBool(b, d.Permissions.Edit)
	b = append(b, `},"reviewPlan":`...)
	b = d.ReviewPlan.appendJSON(b)
	b = append(b, `,"reviewStatus":`...)
	b = jsontext.AppendString(b, string(d.ReviewStatus))
	b = append(b, `,"reviewer":`...)
	if d.Reviewer == nil {
		b = append(b, "null"...)
	} else {
		b = appendUserRef(b, *d.Reviewer)
	}
	b = append(b, `,"task":`...)
	b = appendNamedRef(b, d.Task)
	b = append(b, `,"title":`...)
	b = jsontext.AppendString(b, d.Title)
	b = append(b, `,"type":`...)
	b = jsontext.AppendString(b, string(d.Type))
	b = append(b, `,"updatedAt":`...)
	b = jsontext.AppendTime(b, d.UpdatedAt)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(d.Version), 10)
	return append(b, '}')
}

func (v *VersionDetail) appendJSON(b []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"assets":`...)
	if v.Assets == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range v.Assets {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.Assets[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"author":`...)
	b = appendUserRef(b, v.Author)
	b = append(b, `,"createdAt":`...)
	b = jsontext.AppendTime(b, v.CreatedAt)
	b = append(b, `,"id":`...)
	b = jsontext.AppendUUID(b, v.Id)
	b = append(b, `,"number":`...)
	b = strconv.AppendInt(b, int64(v.Number), 10)
	return append(b, '}')
}

func (a *AssetDetail) appendJSON(b []byte) []byte {
	b = append(b, `{"durationMs":`...)
	b = appendInt32(b, a.DurationMs)
	b = append(b, `,"fileName":`...)
	b = jsontext.AppendString(b, a.FileName)
	b = append(b, `,"height":`...)
	b = appendInt32(b, a.Height)
	b = append(b, `,"id":`...)
	b = jsontext.AppendUUID(b, a.Id)
	b = append(b, `,"mimeType":`...)
	b = jsontext.AppendString(b, a.MimeType)
	b = append(b, `,"sha256":`...)
	b = jsontext.AppendString(b, a.Sha256)
	b = append(b, `,"sizeBytes":`...)
	b = strconv.AppendInt(b, a.SizeBytes, 10)
	b = append(b, `,"uploadId":`...)
	if a.UploadId == nil {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendUUID(b, *a.UploadId)
	}
	b = append(b, `,"url":`...)
	b = jsontext.AppendString(b, a.Url)
	b = append(b, `,"width":`...)
	b = appendInt32(b, a.Width)
	return append(b, '}')
}

// appendRef appends a UserRef or a NamedRef: the same two members.
func appendRef(b []byte, id uuid.UUID, name string) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendUUID(b, id)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, name)
	return append(b, '}')
}

// appendUserRef appends a UserRef with its kind, as encoding/json writes
// the generated type.
func appendUserRef(b []byte, r api.UserRef) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendUUID(b, r.Id)
	b = append(b, `,"kind":`...)
	b = jsontext.AppendString(b, string(r.Kind))
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, r.Name)
	return append(b, '}')
}

func appendNamedRef(b []byte, r *api.NamedRef) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	return appendRef(b, r.Id, r.Name)
}

func appendInt32(b []byte, n *int32) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func (p *ReviewPlanDetail) appendJSON(b []byte) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"activeStage":`...)
	if p.ActiveStage == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*p.ActiveStage), 10)
	}
	b = append(b, `,"stages":`...)
	if p.Stages == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i := range p.Stages {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.Stages[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

func (s *ReviewStageDetail) appendJSON(b []byte) []byte {
	b = append(b, `{"decisions":`...)
	if s.Decisions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range s.Decisions {
			if i > 0 {
				b = append(b, ',')
			}
			b = s.Decisions[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"dueAt":`...)
	if s.DueAt == nil {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendTime(b, *s.DueAt)
	}
	b = append(b, `,"guestEmails":`...)
	if s.GuestEmails == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range s.GuestEmails {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, e)
		}
		b = append(b, ']')
	}
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, s.Name)
	b = append(b, `,"reviewers":`...)
	if s.Reviewers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range s.Reviewers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendUserRef(b, r)
		}
		b = append(b, ']')
	}
	b = append(b, `,"rule":`...)
	b = jsontext.AppendString(b, string(s.Rule))
	b = append(b, `,"status":`...)
	b = jsontext.AppendString(b, string(s.Status))
	return append(b, '}')
}

func (d *ReviewDecisionDetail) appendJSON(b []byte) []byte {
	b = append(b, `{"at":`...)
	b = jsontext.AppendTime(b, d.At)
	b = append(b, `,"comment":`...)
	if d.Comment == nil {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendString(b, *d.Comment)
	}
	b = append(b, `,"decision":`...)
	b = jsontext.AppendString(b, string(d.Decision))
	b = append(b, `,"reviewer":`...)
	b = appendUserRef(b, d.Reviewer)
	b = append(b, `,"versionNumber":`...)
	b = strconv.AppendInt(b, int64(d.VersionNumber), 10)
	return append(b, '}')
}
