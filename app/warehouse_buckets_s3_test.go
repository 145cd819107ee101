package app

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestProjectDeleteRacingWarehouseCreatesOnS3 is issue 11 item 12: a project delete racing
// warehouse creates on an S3 catalog left the buckets of creates that failed. Whatever the
// interleaving, a create that failed leaves no bucket, one that succeeded has its bucket, and no
// warehouse outlives its project.
func TestProjectDeleteRacingWarehouseCreatesOnS3(t *testing.T) {
	s3, rootBucket := testenv.S3Bucket(t)
	cfg := DefaultConfig()
	cfg.LogLevel = "error"
	useS3(&cfg, s3, "s3://"+rootBucket+"/catalog")
	base := runServer(t, cfg)
	ctx := context.Background()
	c, err := controlclient.NewClientWithResponses(base)
	assert.NilError(t, err)
	mc := minioClient(t, s3)

	for round := range 3 {
		project := fmt.Sprintf("race%d", round)
		p, err := c.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: project})
		assert.NilError(t, err)
		expect(t, p.StatusCode(), p.Body, 200, 0)
		const creates = 6
		buckets := make([]string, creates)
		statuses := make([]int, creates)
		for i := range buckets {
			buckets[i] = newWarehouseBucketName(t, s3)
		}
		var wg sync.WaitGroup
		for i := range creates {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{
					Id: fmt.Sprintf("%s-w%d", project, i), Project: project, Bucket: &buckets[i]})
				assert.Check(t, err)
				if err == nil {
					statuses[i] = r.StatusCode()
				}
			}()
		}
		deleted := false
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				d, err := c.DeleteProjectWithResponse(ctx, project, nil)
				if err == nil && d.StatusCode() == 200 {
					deleted = true
					return
				}
			}
		}()
		wg.Wait()
		for i, b := range buckets {
			ok, err := mc.BucketExists(ctx, b)
			assert.NilError(t, err)
			assert.Equal(t, ok, statuses[i] == 200, "round %d create %d answered %d; its bucket exists: %v", round, i, statuses[i], ok)
			if deleted {
				assert.Assert(t, statuses[i] != 200, "a warehouse outlives its deleted project")
			}
		}
	}
}
