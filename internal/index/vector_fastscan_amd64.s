// The fast-scan kernel (see vector_fastscan.go): per block of 32 vectors,
// 16-bit sums of byte-shuffle lookups, then each vector's bound in float32
// compared with the threshold, as fastScanGeneric does, operation for
// operation.

#include "textflag.h"

// BOUND turns eight 16-bit sums in xsum into the mask bits of eight vectors
// whose factors are at off(DI) (scales) and off+128(DI) (error bounds), and
// ors them into R12 at bit shift.
#define BOUND(xsum, off, shift) \
	VPMOVZXWD    xsum, Y6; \
	VCVTDQ2PS    Y6, Y6; \
	VMULPS       Y14, Y6, Y6; \
	VADDPS       Y13, Y6, Y6; \
	VMULPS       off(DI), Y6, Y6; \
	VMULPS       off+128(DI), Y12, Y7; \
	VADDPS       Y7, Y6, Y6; \
	VCMPPS       $0x1e, Y11, Y6, Y6; \
	VMOVMSKPS    Y6, AX; \
	SHLL         $shift, AX; \
	ORL          AX, R12

// func fastScanAVX2(codes *byte, factors *float32, blocks int, pairs int, lut *byte, c *scanConsts, masks *uint32)
TEXT ·fastScanAVX2(SB), NOSPLIT, $0-56
	MOVQ codes+0(FP), SI
	MOVQ factors+8(FP), DI
	MOVQ blocks+16(FP), BX
	MOVQ pairs+24(FP), CX
	MOVQ lut+32(FP), R8
	MOVQ c+40(FP), R9
	MOVQ masks+48(FP), DX

	MOVL         $0x0f0f0f0f, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15 // low half-byte mask
	VBROADCASTSS 0(R9), Y14  // delta
	VBROADCASTSS 4(R9), Y13  // offset
	VBROADCASTSS 8(R9), Y12  // eps
	VBROADCASTSS 12(R9), Y11 // threshold

block:
	TESTQ BX, BX
	JZ    done
	VPXOR Y0, Y0, Y0 // Σ (even + 256·odd) per 16-bit lane, modulo 2¹⁶
	VPXOR Y1, Y1, Y1 // Σ odd
	MOVQ  R8, R10
	MOVQ  CX, R11

pair:
	VMOVDQU        (SI), Y2
	VPSRLW         $4, Y2, Y3
	VPAND          Y15, Y2, Y2
	VPAND          Y15, Y3, Y3
	VBROADCASTI128 (R10), Y4
	VBROADCASTI128 16(R10), Y5
	VPSHUFB        Y2, Y4, Y4
	VPSHUFB        Y3, Y5, Y5
	VPADDW         Y4, Y0, Y0
	VPADDW         Y5, Y0, Y0
	VPSRLW         $8, Y4, Y4
	VPSRLW         $8, Y5, Y5
	VPADDW         Y4, Y1, Y1
	VPADDW         Y5, Y1, Y1
	ADDQ           $32, SI
	ADDQ           $32, R10
	DECQ           R11
	JNZ            pair

	VPSLLW      $8, Y1, Y2
	VPSUBW      Y2, Y0, Y0 // Σ even
	XORL        R12, R12
	BOUND(X0, 0, 0)
	VEXTRACTI128 $1, Y0, X0
	BOUND(X0, 32, 8)
	BOUND(X1, 64, 16)
	VEXTRACTI128 $1, Y1, X1
	BOUND(X1, 96, 24)
	MOVL R12, (DX)
	ADDQ $4, DX
	ADDQ $256, DI
	DECQ BX
	JMP  block

done:
	VZEROUPPER
	RET
