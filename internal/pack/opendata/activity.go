package opendata

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/tool"
)

// ActivityInput is the input of getDatasetActivity and getOrganizationActivity.
type ActivityInput struct {
	ID     string `json:"id" jsonschema:"The dataset's or organization's name or UUID" schema:"minLength=1,maxLength=200"`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many activities to return, newest first (1-100; portals may cap lower, 31 by default)" schema:"minimum=1,maximum=100,default=20"`
	Offset int    `json:"offset,omitempty" jsonschema:"How many activities to skip, for paging" schema:"minimum=0,maximum=100000,default=0"`
	Portal string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// ActivityInfo is one change to a dataset or organization.
type ActivityInfo struct {
	ID           string `json:"id"`
	Timestamp    string `json:"timestamp" jsonschema:"When it happened (ISO 8601, portal time)"`
	ActivityType string `json:"activity_type" jsonschema:"What happened, e.g. new package, changed package, deleted package"`
	UserID       string `json:"user_id,omitempty"`
	ObjectID     string `json:"object_id" jsonschema:"The id of the dataset or organization changed"`
	ObjectName   string `json:"object_name,omitempty" jsonschema:"The name of the dataset or organization changed, as it was then"`
	ObjectTitle  string `json:"object_title,omitempty" jsonschema:"Its title, as it was then"`
}

// ActivityOutput is the output of getDatasetActivity and getOrganizationActivity.
type ActivityOutput struct {
	Activities []ActivityInfo `json:"activities" jsonschema:"The activities, newest first"`
	Count      int            `json:"count" jsonschema:"How many activities this page holds"`
	Limit      int            `json:"limit"`
	Offset     int            `json:"offset"`
	HasMore    bool           `json:"hasMore" jsonschema:"Whether the page was full, so that more may follow at offset+count"`
	PortalURL  string         `json:"portalUrl,omitempty" jsonschema:"The dataset's or organization's page on the portal"`
	APIURL     string         `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary counts the activities.
func (o ActivityOutput) Summary() string {
	s := fmt.Sprintf("%d activities", o.Count)
	if o.Offset > 0 {
		s += fmt.Sprintf(" from offset %d", o.Offset)
	}
	if len(o.Activities) > 0 {
		a := o.Activities[0]
		s += fmt.Sprintf("; latest: %s", a.ActivityType)
		if name := cmp.Or(a.ObjectTitle, a.ObjectName); name != "" {
			s += fmt.Sprintf(" %q", httpclient.ClipRunes(name, maxSummaryName))
		}
		s += " at " + a.Timestamp
	}
	return s + morePhrase("offset", o.Offset+o.Count, o.HasMore)
}

func getDatasetActivityTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getDatasetActivity",
		Title: "Dataset change history (CKAN)",
		Description: "List the recent changes to one dataset (created, updated, deleted), newest first. " +
			"Portals on CKAN 2.10 or later serve this only with the activity plugin; others answer UNSUPPORTED.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getDatasetActivity))
}

func getOrganizationActivityTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getOrganizationActivity",
		Title: "Publisher change history (CKAN)",
		Description: "List the recent changes to one organization and its datasets, newest first. " +
			"Portals on CKAN 2.10 or later serve this only with the activity plugin; others answer UNSUPPORTED.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getOrganizationActivity))
}

func (p *pack) getDatasetActivity(ctx context.Context, in ActivityInput) (ActivityOutput, error) {
	return p.activity(ctx, in, "package_activity_list", "package", func(c *ckan.Client, id string) error {
		_, _, err := c.PackageShow(ctx, id)
		return err
	})
}

func (p *pack) getOrganizationActivity(ctx context.Context, in ActivityInput) (ActivityOutput, error) {
	return p.activity(ctx, in, "organization_activity_list", "group", func(c *ckan.Client, id string) error {
		_, _, err := c.OrganizationShow(ctx, id, false)
		return err
	})
}

// activity lists the activity stream of action. dataKey is where the
// changed object sits in an activity's data ("package" or "group"); exists
// checks the object when the portal's "Not Found Error" could mean either
// that it is missing or that the action is.
func (p *pack) activity(ctx context.Context, in ActivityInput, action, dataKey string,
	exists func(c *ckan.Client, id string) error) (ActivityOutput, error) {
	id, err := trimID("id", in.ID)
	if err != nil {
		return ActivityOutput{}, err
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return ActivityOutput{}, err
	}
	var list []ckan.Activity
	resp, err := c.Get(ctx, action, ckan.ActivityListParams(id, in.Limit, in.Offset), &list)
	if err != nil {
		return ActivityOutput{}, activityError(err, action, func() error { return exists(c, id) })
	}
	// A portal that ignores limit must not flood the agent.
	full := len(list) >= in.Limit
	list = list[:min(len(list), in.Limit)]
	out := ActivityOutput{Activities: make([]ActivityInfo, 0, len(list)), Count: len(list),
		Limit: in.Limit, Offset: in.Offset, HasMore: full, APIURL: resp.URL}
	if dataKey == "package" {
		out.PortalURL = pagesOf(c).Dataset("", id)
	} else {
		out.PortalURL = pagesOf(c).Organization(id)
	}
	for _, a := range list {
		info := ActivityInfo{ID: a.ID, Timestamp: a.Timestamp, ActivityType: a.ActivityType, UserID: a.UserID, ObjectID: a.ObjectID}
		var data map[string]json.RawMessage
		if json.Unmarshal(a.Data, &data) == nil {
			var obj struct {
				Name  string `json:"name"`
				Title string `json:"title"`
			}
			if json.Unmarshal(data[dataKey], &obj) == nil {
				info.ObjectName, info.ObjectTitle = obj.Name, obj.Title
			}
		}
		out.Activities = append(out.Activities, info)
	}
	return out, nil
}

// activityError maps the failure of an activity action. An unknown action
// is UNSUPPORTED; a "Not Found Error" is UNSUPPORTED only when the object
// itself exists (CKAN 2.10+ without the activity plugin), else NOT_FOUND.
func activityError(err error, action string, exists func() error) error {
	const what = "activity streams (CKAN 2.10 and later need the activity plugin for " // completed below
	if ckan.IsUnknownAction(err) {
		return unsupported(err, what+action+")")
	}
	var ce *ckan.Error
	if errors.As(err, &ce) && ce.Type == ckan.TypeNotFound {
		if exists() == nil {
			return unsupported(err, what+action+")")
		}
	}
	return toolError(err)
}
