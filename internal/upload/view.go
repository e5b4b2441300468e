package upload

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/apifield"
)

// ContentURL is the API path an uploaded asset's url names, absolute
// under base.
func ContentURL(base string, org, asset uuid.UUID) string {
	return fmt.Sprintf("%s/api/v1/organizations/%s/assets/%s/content", base, org, asset)
}

// Answer is the upload as the API shows it, its asset's url under base
// (the server's public address).
func (v View) Answer(base string) api.Upload {
	out := api.Upload{
		Id: v.ID, Status: api.UploadStatus(v.Status), FileName: v.FileName, MimeType: api.AssetMimeType(v.MimeType),
		SizeBytes: v.SizeBytes, Sha256: v.Sha256, PartSize: v.PartSize, Parts: make([]api.UploadPart, len(v.Parts)),
		Asset: nullable.NewNullNullable[api.Asset](), CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt,
	}
	for i, p := range v.Parts {
		header := p.Header
		if header == nil {
			header = map[string]string{}
		}
		out.Parts[i] = api.UploadPart{Number: p.Number, Url: apifield.Nullable(p.URL), ExpiresAt: apifield.Nullable(p.ExpiresAt), Headers: header, Received: p.Received}
	}
	if v.AssetID != nil {
		out.Asset = nullable.NewNullableWithValue(api.Asset{
			Id: *v.AssetID, FileName: v.FileName, MimeType: v.MimeType, SizeBytes: v.SizeBytes, Sha256: v.Sha256,
			Url:   ContentURL(base, v.OrganizationID, *v.AssetID),
			Width: apifield.Nullable(widen32(v.Width)), Height: apifield.Nullable(widen32(v.Height)),
			DurationMs: apifield.Nullable(widen32(v.DurationMs)), UploadId: nullable.NewNullableWithValue(v.ID),
		})
	}
	return out
}

func widen32(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}
