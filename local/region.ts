/** The region every local emulator and client uses (the emulators accept any; one value keeps ARNs consistent). */
export const LOCAL_REGION = 'us-east-1';
