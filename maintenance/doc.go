// Package maintenance runs the table sweep (compact → optimize indices → cleanup), the orphan scan,
// the drift reconciler and the trash purge. It never deletes anything a report has not cleared.
package maintenance
