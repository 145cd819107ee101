package errors

// Sentinels, one per code, for errors.Is: they match every error of their code.
var (
	ErrUnsupported                = &Error{Code: Unsupported}
	ErrNamespaceNotFound          = &Error{Code: NamespaceNotFound}
	ErrNamespaceAlreadyExists     = &Error{Code: NamespaceAlreadyExists}
	ErrNamespaceNotEmpty          = &Error{Code: NamespaceNotEmpty}
	ErrTableNotFound              = &Error{Code: TableNotFound}
	ErrTableAlreadyExists         = &Error{Code: TableAlreadyExists}
	ErrTableIndexNotFound         = &Error{Code: TableIndexNotFound}
	ErrTableIndexAlreadyExists    = &Error{Code: TableIndexAlreadyExists}
	ErrTableTagNotFound           = &Error{Code: TableTagNotFound}
	ErrTableTagAlreadyExists      = &Error{Code: TableTagAlreadyExists}
	ErrTransactionNotFound        = &Error{Code: TransactionNotFound}
	ErrTableVersionNotFound       = &Error{Code: TableVersionNotFound}
	ErrTableColumnNotFound        = &Error{Code: TableColumnNotFound}
	ErrInvalidInput               = &Error{Code: InvalidInput}
	ErrConcurrentModification     = &Error{Code: ConcurrentModification}
	ErrPermissionDenied           = &Error{Code: PermissionDenied}
	ErrUnauthenticated            = &Error{Code: Unauthenticated}
	ErrServiceUnavailable         = &Error{Code: ServiceUnavailable}
	ErrInternal                   = &Error{Code: Internal}
	ErrInvalidTableState          = &Error{Code: InvalidTableState}
	ErrTableSchemaValidationError = &Error{Code: TableSchemaValidationError}
	ErrThrottling                 = &Error{Code: Throttling}
	ErrTableBranchNotFound        = &Error{Code: TableBranchNotFound}
	ErrTableBranchAlreadyExists   = &Error{Code: TableBranchAlreadyExists}
)

// Constructors, one per code. format may use %w to keep a cause.

func Unsupportedf(format string, args ...any) *Error { return Newf(Unsupported, format, args...) }
func NamespaceNotFoundf(format string, args ...any) *Error {
	return Newf(NamespaceNotFound, format, args...)
}
func NamespaceAlreadyExistsf(format string, args ...any) *Error {
	return Newf(NamespaceAlreadyExists, format, args...)
}
func NamespaceNotEmptyf(format string, args ...any) *Error {
	return Newf(NamespaceNotEmpty, format, args...)
}
func TableNotFoundf(format string, args ...any) *Error { return Newf(TableNotFound, format, args...) }
func TableAlreadyExistsf(format string, args ...any) *Error {
	return Newf(TableAlreadyExists, format, args...)
}
func TableIndexNotFoundf(format string, args ...any) *Error {
	return Newf(TableIndexNotFound, format, args...)
}
func TableIndexAlreadyExistsf(format string, args ...any) *Error {
	return Newf(TableIndexAlreadyExists, format, args...)
}
func TableTagNotFoundf(format string, args ...any) *Error {
	return Newf(TableTagNotFound, format, args...)
}
func TableTagAlreadyExistsf(format string, args ...any) *Error {
	return Newf(TableTagAlreadyExists, format, args...)
}
func TransactionNotFoundf(format string, args ...any) *Error {
	return Newf(TransactionNotFound, format, args...)
}
func TableVersionNotFoundf(format string, args ...any) *Error {
	return Newf(TableVersionNotFound, format, args...)
}
func TableColumnNotFoundf(format string, args ...any) *Error {
	return Newf(TableColumnNotFound, format, args...)
}
func InvalidInputf(format string, args ...any) *Error { return Newf(InvalidInput, format, args...) }
func ConcurrentModificationf(format string, args ...any) *Error {
	return Newf(ConcurrentModification, format, args...)
}
func PermissionDeniedf(format string, args ...any) *Error {
	return Newf(PermissionDenied, format, args...)
}
func Unauthenticatedf(format string, args ...any) *Error {
	return Newf(Unauthenticated, format, args...)
}
func ServiceUnavailablef(format string, args ...any) *Error {
	return Newf(ServiceUnavailable, format, args...)
}
func Internalf(format string, args ...any) *Error { return Newf(Internal, format, args...) }
func InvalidTableStatef(format string, args ...any) *Error {
	return Newf(InvalidTableState, format, args...)
}
func TableSchemaValidationErrorf(format string, args ...any) *Error {
	return Newf(TableSchemaValidationError, format, args...)
}
func Throttlingf(format string, args ...any) *Error { return Newf(Throttling, format, args...) }
func TableBranchNotFoundf(format string, args ...any) *Error {
	return Newf(TableBranchNotFound, format, args...)
}
func TableBranchAlreadyExistsf(format string, args ...any) *Error {
	return Newf(TableBranchAlreadyExists, format, args...)
}
