/* DcMotorStop: a stiff drive against a stop (see DcMotorStop.mo); its equations
 * are common/dc_motor_stop.h, shared with DcMotorStopEvents. */
#include "dc_motor_stop.h"
