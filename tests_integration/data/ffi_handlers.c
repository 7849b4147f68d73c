/* Typed-FFI handlers for test_ffi.py, written against XLA's C API only (c_api.h from
 * modjax.ffi.include_dir()), so any C compiler builds them:
 *   scale:    out = x * factor (+ offset), float32 buffers of any shape, f32 attributes;
 *   describe: fill every float32 result with (elements of all operands) + 100 * (their ranks),
 *             which tells how vmap_method shaped the operands;
 *   bump:     count its calls in `calls` and write the count into its results (int32);
 * results of other types (tokens) are left alone. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"

static XLA_FFI_Error* fail(const XLA_FFI_CallFrame* frame, const char* message) {
  XLA_FFI_Error_Create_Args args;
  memset(&args, 0, sizeof(args));
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message;
  args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  return frame->api->XLA_FFI_Error_Create(&args);
}

/* XLA first asks a handler for its metadata (the FFI version it was built with). */
static int answered_metadata(XLA_FFI_CallFrame* frame) {
  XLA_FFI_Extension_Base* ext = frame->extension_start;
  if (ext == NULL || ext->type != XLA_FFI_Extension_Metadata) return 0;
  XLA_FFI_Metadata* metadata = ((XLA_FFI_Metadata_Extension*)ext)->metadata;
  metadata->api_version.major_version = XLA_FFI_API_MAJOR;
  metadata->api_version.minor_version = XLA_FFI_API_MINOR;
  metadata->traits = 0;
  return 1;
}

static const XLA_FFI_Scalar* find_scalar(const XLA_FFI_CallFrame* frame, const char* name) {
  for (int64_t i = 0; i < frame->attrs.size; ++i) {
    const XLA_FFI_ByteSpan* n = frame->attrs.names[i];
    if (n->len == strlen(name) && memcmp(n->ptr, name, n->len) == 0 &&
        frame->attrs.types[i] == XLA_FFI_AttrType_SCALAR)
      return (const XLA_FFI_Scalar*)frame->attrs.attrs[i];
  }
  return NULL;
}

XLA_FFI_Error* scale(XLA_FFI_CallFrame* frame) {
  if (answered_metadata(frame)) return NULL;
  if (frame->args.size != 1) return fail(frame, "scale takes one operand");
  if (frame->rets.size != 1) return fail(frame, "scale returns one result");
  const XLA_FFI_Scalar* factor = find_scalar(frame, "factor");
  if (factor == NULL || factor->dtype != XLA_FFI_DataType_F32)
    return fail(frame, "scale needs a float32 attribute 'factor'");
  const XLA_FFI_Scalar* offset = find_scalar(frame, "offset");
  float add = 0.0f;
  if (offset != NULL) {
    if (offset->dtype != XLA_FFI_DataType_F32) return fail(frame, "offset must be float32");
    add = *(const float*)offset->value;
  }
  const XLA_FFI_Buffer* x = (const XLA_FFI_Buffer*)frame->args.args[0];
  XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)frame->rets.rets[0];
  if (x->dtype != XLA_FFI_DataType_F32 || out->dtype != XLA_FFI_DataType_F32)
    return fail(frame, "scale works on float32 buffers");
  int64_t n = 1;
  for (int64_t d = 0; d < x->rank; ++d) n *= x->dims[d];
  const float k = *(const float*)factor->value;
  const float* src = (const float*)x->data;
  float* dst = (float*)out->data;
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * k + add;
  return NULL;
}

static void fill(XLA_FFI_CallFrame* frame, float value) {
  for (int64_t r = 0; r < frame->rets.size; ++r) {
    XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)frame->rets.rets[r];
    int64_t n = 1;
    for (int64_t d = 0; d < out->rank; ++d) n *= out->dims[d];
    for (int64_t i = 0; i < n; ++i) {
      if (out->dtype == XLA_FFI_DataType_F32) ((float*)out->data)[i] = value;
      else if (out->dtype == XLA_FFI_DataType_S32) ((int32_t*)out->data)[i] = (int32_t)value;
    }
  }
}

XLA_FFI_Error* describe(XLA_FFI_CallFrame* frame) {
  if (answered_metadata(frame)) return NULL;
  int64_t total = 0;
  for (int64_t a = 0; a < frame->args.size; ++a) {
    const XLA_FFI_Buffer* x = (const XLA_FFI_Buffer*)frame->args.args[a];
    int64_t n = 1;
    for (int64_t d = 0; d < x->rank; ++d) n *= x->dims[d];
    total += n + 100 * x->rank;
  }
  fill(frame, (float)total);
  return NULL;
}

int calls = 0;

XLA_FFI_Error* bump(XLA_FFI_CallFrame* frame) {
  if (answered_metadata(frame)) return NULL;
  calls += 1;
  fill(frame, (float)calls);
  return NULL;
}
