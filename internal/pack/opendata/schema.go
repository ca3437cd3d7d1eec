package opendata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// Bounds of a dataset schema's output: real schemas have tens of fields.
const (
	maxSchemaFields  = 500
	maxSchemaChoices = 200
)

// GetDatasetSchemaInput is the input of getDatasetSchema.
type GetDatasetSchemaInput struct {
	Type   string `json:"type,omitempty" jsonschema:"The dataset type whose schema to get" schema:"minLength=1,maxLength=100,default=dataset"`
	Portal string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// SchemaFieldInfo is one metadata field of a dataset or resource.
type SchemaFieldInfo struct {
	FieldName string       `json:"field_name" jsonschema:"The key the field has in getDatasetDetails (or its extras)"`
	Label     any          `json:"label,omitempty" jsonschema:"Its label: a string, or an object keyed by language"`
	Required  bool         `json:"required,omitempty"`
	Preset    string       `json:"preset,omitempty" jsonschema:"The scheming preset, e.g. select, date, multiple_checkbox"`
	HelpText  any          `json:"help_text,omitempty"`
	Choices   []ChoiceInfo `json:"choices,omitempty" jsonschema:"The allowed values of a select field"`
}

// ChoiceInfo is one allowed value of a field.
type ChoiceInfo struct {
	Value string `json:"value"`
	Label any    `json:"label,omitempty"`
}

// GetDatasetSchemaOutput is the output of getDatasetSchema.
type GetDatasetSchemaOutput struct {
	DatasetType    string            `json:"dataset_type"`
	About          any               `json:"about,omitempty"`
	DatasetFields  []SchemaFieldInfo `json:"dataset_fields" jsonschema:"The metadata fields of a dataset, in form order"`
	ResourceFields []SchemaFieldInfo `json:"resource_fields" jsonschema:"The metadata fields of a resource, in form order"`
	Truncated      bool              `json:"truncated,omitempty" jsonschema:"Whether fields or choices were left out to bound the answer"`
	APIURL         string            `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary counts the fields.
func (o GetDatasetSchemaOutput) Summary() string {
	return fmt.Sprintf("schema %q: %d dataset fields, %d resource fields", o.DatasetType, len(o.DatasetFields), len(o.ResourceFields))
}

func getDatasetSchemaTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getDatasetSchema",
		Title: "Dataset metadata schema (CKAN)",
		Description: "Get the metadata schema of a portal's datasets (default: data.gov.il): each dataset and resource field with its label, " +
			"whether it is required, and its allowed values. Needs the ckanext-scheming extension; other portals answer UNSUPPORTED.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getDatasetSchema))
}

func (p *pack) getDatasetSchema(ctx context.Context, in GetDatasetSchemaInput) (GetDatasetSchemaOutput, error) {
	typ, err := trimID("type", in.Type)
	if err != nil {
		return GetDatasetSchemaOutput{}, err
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return GetDatasetSchemaOutput{}, err
	}
	s, resp, err := c.DatasetSchemaShow(ctx, typ)
	if err != nil {
		var ce *ckan.Error
		switch {
		case ckan.IsUnknownAction(err):
			return GetDatasetSchemaOutput{}, unsupported(err, "dataset schemas (it does not run ckanext-scheming)")
		case errors.As(err, &ce) && ce.Type == ckan.TypeNotFound:
			return GetDatasetSchemaOutput{}, unsupported(err, fmt.Sprintf("a schema for dataset type %q (it may not run ckanext-scheming)", typ))
		}
		return GetDatasetSchemaOutput{}, toolError(err)
	}
	out := GetDatasetSchemaOutput{DatasetType: strings.TrimSpace(s.DatasetType), About: rawValue(s.About), APIURL: resp.URL}
	if out.DatasetType == "" {
		out.DatasetType = typ
	}
	var cut bool
	out.DatasetFields, cut = schemaFields(s.DatasetFields)
	out.Truncated = cut
	out.ResourceFields, cut = schemaFields(s.ResourceFields)
	out.Truncated = out.Truncated || cut
	return out, nil
}

// schemaFields converts and bounds a field list; it reports whether it cut.
func schemaFields(fs []ckan.SchemaField) ([]SchemaFieldInfo, bool) {
	cut := len(fs) > maxSchemaFields
	fs = fs[:min(len(fs), maxSchemaFields)]
	out := make([]SchemaFieldInfo, 0, len(fs))
	for _, f := range fs {
		info := SchemaFieldInfo{FieldName: f.FieldName, Label: rawValue(f.Label), Required: bool(f.Required),
			Preset: f.Preset, HelpText: rawValue(f.HelpText)}
		if len(f.Choices) > maxSchemaChoices {
			cut = true
		}
		for _, ch := range f.Choices[:min(len(f.Choices), maxSchemaChoices)] {
			info.Choices = append(info.Choices, ChoiceInfo{Value: string(ch.Value), Label: rawValue(ch.Label)})
		}
		out = append(out, info)
	}
	return out, cut
}

// rawValue decodes a label-like value (a string or a language → string
// object) for output; nothing, null or undecodable JSON gives nil.
func rawValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}
